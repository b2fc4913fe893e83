#include "worker/handlers/proxy/response_head.h"

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

// Whether a Connection field of `head` names a field. Most answers have no Connection
// field, and then no field is looked up in one.
class ConnectionOptions {
 public:
  explicit ConnectionOptions(const UpstreamResponseHead& head) {
    for (const HeaderField& h : head.headers) {
      if (equalsIgnoreCase(h.name, "connection")) {
        head_ = &head;
        return;
      }
    }
  }

  bool names(std::string_view name) const {
    if (head_ == nullptr) return false;
    for (const HeaderField& h : head_->headers) {
      if (equalsIgnoreCase(h.name, "connection") && headerListContains(h.value, name)) return true;
    }
    return false;
  }

 private:
  const UpstreamResponseHead* head_ = nullptr;  // null: it has no Connection field
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
  ConnectionOptions connection(head);
  bool classified = head.names.size() == head.headers.size();
  for (size_t i = 0; i < head.headers.size(); ++i) {
    const HeaderField& h = head.headers[i];
    FieldName known = classified ? head.names[i] : classifyFieldName(h.name);
    if (!dropped(h, known, connection, route, upgrade)) out.push_back(h);
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
