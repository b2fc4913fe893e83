#include "worker/handlers/proxy/response_head.h"

#include <array>

namespace scalws::worker::proxy {
namespace {

constexpr std::array<std::string_view, 10> kDroppedResponseFields = {
    "connection",     "keep-alive", "proxy-connection", "te",     "trailer", "transfer-encoding",
    "content-length", "date",       "server",           "upgrade"};

bool dropped(const HeaderField& h, const UpstreamResponseHead& head, const ProxyRoute& route,
             bool upgrade) {
  for (std::string_view name : kDroppedResponseFields) {
    if (!equalsIgnoreCase(h.name, name)) continue;
    // A 101's Connection and Upgrade tell the client what it switched to.
    if (upgrade && (name == "upgrade" || name == "connection")) return false;
    return true;
  }
  for (const std::string& name : route.remove_response_headers) {
    if (equalsIgnoreCase(h.name, name)) return true;
  }
  for (const auto& set : route.set_response_headers) {
    if (equalsIgnoreCase(h.name, set.name)) return true;
  }
  if (upgrade) return false;
  for (const HeaderField& c : head.headers) {
    if (equalsIgnoreCase(c.name, "connection") && headerListContains(c.value, h.name)) return true;
  }
  return false;
}

}  // namespace

void filterResponseHeaders(const UpstreamResponseHead& head, const ProxyRoute& route, bool upgrade,
                           std::vector<HeaderField>& out) {
  out.clear();
  for (const HeaderField& h : head.headers) {
    if (!dropped(h, head, route, upgrade)) out.push_back(h);
  }
  for (const auto& set : route.set_response_headers)
    out.push_back(HeaderField{set.name, set.value});
  // RFC 9110 §7.6.3: the upstream's Via fields stay, ours follows them (two fields of one
  // list mean the same as one joined with a comma, §5.3).
  if (route.via) out.push_back(HeaderField{"Via", head.http10 ? "1.0 scalws" : "1.1 scalws"});
}

void filterInterimHeaders(const UpstreamResponseHead& head, const ProxyRoute& route,
                          std::vector<HeaderField>& out) {
  out.clear();
  for (const HeaderField& h : head.headers) {
    if (!dropped(h, head, route, false)) out.push_back(h);
  }
}

}  // namespace scalws::worker::proxy
