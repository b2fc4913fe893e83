#include "worker/handlers/proxy/response_head.h"

#include <cstdint>

#include "worker/http/field_name.h"

namespace scalws::worker::proxy {
namespace {

// Hop-by-hop fields, and those the response writer sets itself.
constexpr FieldNameSet kDroppedResponseFields = {
    FieldName::kConnection,      FieldName::kKeepAlive,
    FieldName::kProxyConnection, FieldName::kTe,
    FieldName::kTrailer,         FieldName::kTransferEncoding,
    FieldName::kContentLength,   FieldName::kDate,
    FieldName::kServer,          FieldName::kUpgrade};

// The answer's fields with each name recognised: as the parser classified them, or here
// for a head built elsewhere.
class KnownFields {
 public:
  explicit KnownFields(const UpstreamResponseHead& head)
      : head_(head), classified_(head.names.size() == head.headers.size()) {}
  size_t size() const { return head_.headers.size(); }
  const HeaderField& field(size_t i) const { return head_.headers[i]; }
  FieldName known(size_t i) const {
    return classified_ ? head_.names[i] : classifyFieldName(head_.headers[i].name);
  }

 private:
  const UpstreamResponseHead& head_;
  bool classified_;
};

// Whether a Connection field of the answer names a field. Most answers have no Connection
// field, and then no field is looked up in one.
class ConnectionOptions {
 public:
  explicit ConnectionOptions(const KnownFields& fields) : fields_(fields) {
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields.known(i) == FieldName::kConnection) {
        first_ = i;
        return;
      }
    }
  }

  bool names(std::string_view name) const {
    for (size_t i = first_; i < fields_.size(); ++i) {
      if (fields_.known(i) == FieldName::kConnection &&
          headerListContains(fields_.field(i).value, name)) {
        return true;
      }
    }
    return false;
  }

 private:
  const KnownFields& fields_;
  size_t first_ = SIZE_MAX;  // the first Connection field; none: SIZE_MAX
};

bool dropped(const HeaderField& h, FieldName known, const ConnectionOptions& connection,
             const ProxyRoute& route, bool upgrade) {
  if (kDroppedResponseFields.contains(known)) {
    // A 101's Connection and Upgrade tell the client what it switched to.
    return !(upgrade && (known == FieldName::kUpgrade || known == FieldName::kConnection));
  }
  for (const std::string& name : route.remove_response_headers) {
    if (equalsIgnoreCase(h.name, name)) return true;
  }
  for (const auto& set : route.set_response_headers) {
    if (equalsIgnoreCase(h.name, set.name)) return true;
  }
  return !upgrade && connection.names(h.name);
}

void keepEndToEnd(const UpstreamResponseHead& head, const ProxyRoute& route, bool upgrade,
                  std::vector<HeaderField>& out) {
  out.clear();
  KnownFields fields(head);
  ConnectionOptions connection(fields);
  for (size_t i = 0; i < fields.size(); ++i) {
    const HeaderField& h = fields.field(i);
    if (!dropped(h, fields.known(i), connection, route, upgrade)) out.push_back(h);
  }
}

}  // namespace

void filterResponseHeaders(const UpstreamResponseHead& head, const ProxyRoute& route, bool upgrade,
                           std::vector<HeaderField>& out) {
  keepEndToEnd(head, route, upgrade, out);
  for (const auto& set : route.set_response_headers)
    out.push_back(HeaderField{set.name, set.value});
  // RFC 9110 §7.6.3: the upstream's Via fields stay, ours follows them (two fields of one
  // list mean the same as one joined with a comma, §5.3).
  if (route.via) out.push_back(HeaderField{"Via", head.http10 ? "1.0 scalws" : "1.1 scalws"});
}

void filterInterimHeaders(const UpstreamResponseHead& head, const ProxyRoute& route,
                          std::vector<HeaderField>& out) {
  keepEndToEnd(head, route, false, out);
}

}  // namespace scalws::worker::proxy
