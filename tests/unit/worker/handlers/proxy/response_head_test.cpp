// The client's head for an upstream answer: hop-by-hop and framing fields gone, route
// settings applied.
#include "worker/handlers/proxy/response_head.h"

#include <gtest/gtest.h>

namespace scalws::worker::proxy {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields filteredOnce(const UpstreamResponseHead& head, const ProxyRoute& route, bool upgrade) {
  std::vector<HeaderField> out;
  filterResponseHeaders(head, route, upgrade, out);
  Fields f;
  for (const auto& h : out) f.emplace_back(h.name, h.value);
  return f;
}

// Filtered twice: as a head built by hand (names unclassified) and as the parser hands it
// over (each name classified); the two must agree.
Fields filtered(const std::vector<HeaderField>& in, const ProxyRoute& route, bool upgrade = false) {
  UpstreamResponseHead head;
  head.status = upgrade ? 101 : 200;
  head.headers = in;
  Fields unclassified = filteredOnce(head, route, upgrade);
  std::vector<FieldName> names;
  for (const HeaderField& h : in) names.push_back(classifyFieldName(h.name));
  head.names = names;
  EXPECT_EQ(filteredOnce(head, route, upgrade), unclassified);
  return unclassified;
}

TEST(ResponseHead, DropsHopByHopAndFraming) {
  ProxyRoute route;
  std::vector<HeaderField> in = {{"Connection", "keep-alive, X-Secret"},
                                 {"X-Secret", "1"},
                                 {"Keep-Alive", "timeout=5"},
                                 {"Transfer-Encoding", "chunked"},
                                 {"Content-Length", "5"},
                                 {"Trailer", "X"},
                                 {"Upgrade", "h2c"},
                                 {"Date", "Mon"},
                                 {"Server", "gunicorn"},
                                 {"Set-Cookie", "a=1"},
                                 {"Set-Cookie", "b=2"},
                                 {"Content-Type", "text/html"}};
  EXPECT_EQ(filtered(in, route),
            (Fields{{"Set-Cookie", "a=1"}, {"Set-Cookie", "b=2"}, {"Content-Type", "text/html"}}));
}

TEST(ResponseHead, UpgradeKeepsConnectionAndUpgrade) {
  ProxyRoute route;
  std::vector<HeaderField> in = {
      {"Upgrade", "websocket"}, {"Connection", "Upgrade"}, {"Sec-WebSocket-Accept", "abc"}};
  EXPECT_EQ(filtered(in, route, true), (Fields{{"Upgrade", "websocket"},
                                               {"Connection", "Upgrade"},
                                               {"Sec-WebSocket-Accept", "abc"}}));
}

TEST(ResponseHead, RouteSettings) {
  ProxyRoute route;
  route.remove_response_headers = {"x-powered-by"};
  route.set_response_headers = {{"cache-control", "no-store"}};
  route.via = true;
  std::vector<HeaderField> in = {
      {"X-Powered-By", "PHP"}, {"Cache-Control", "max-age=60"}, {"Via", "1.1 varnish"}};
  EXPECT_EQ(filtered(in, route),
            (Fields{{"Via", "1.1 varnish"}, {"cache-control", "no-store"}, {"Via", "1.1 scalws"}}));
}

}  // namespace
}  // namespace scalws::worker::proxy
