// The upstream request head: target, Host modes, hop-by-hop fields, forwarding fields and
// exactly one framing.
#include "worker/handlers/proxy/request_head.h"

#include <gtest/gtest.h>
#include <netinet/in.h>

#include "tests/unit/worker/handlers/proxy/proxy_test_kit.h"

namespace scalws::worker::proxy {
namespace {

using testing::TestRequest;

ServerSpec server() {
  ServerSpec s;
  s.text = "10.0.0.7:9000";
  s.host_header = "api.internal:9000";
  return s;
}

std::string headOf(TestRequest& r, const ProxyRoute& route, RequestHeadOptions options = {}) {
  std::string out;
  appendRequestHead(out, r.request, route, server(), options);
  return out;
}

TEST(RequestHead, TargetAndStripPrefix) {
  ProxyRoute route;
  TestRequest plain(nullptr, "GET", "/a%2Fb?q=%20");
  EXPECT_TRUE(headOf(plain, route).starts_with("GET /a%2Fb?q=%20 HTTP/1.1\r\n"));
  route.strip_prefix = "/api";
  TestRequest api(nullptr, "GET", "/api/v1/x%2F?y");
  EXPECT_TRUE(headOf(api, route).starts_with("GET /v1/x%2F?y HTTP/1.1\r\n"));
  TestRequest exact(nullptr, "GET", "/api");
  EXPECT_TRUE(headOf(exact, route).starts_with("GET / HTTP/1.1\r\n"));
  TestRequest other(nullptr, "GET", "/apix/1");  // not at a segment boundary: unchanged
  EXPECT_TRUE(headOf(other, route).starts_with("GET /apix/1 HTTP/1.1\r\n"));
  // Matched once decoded only: the decoded rest goes re-encoded.
  TestRequest encoded(nullptr, "GET", "/%61pi/a b");
  encoded.request.path = "/api/a b";
  EXPECT_TRUE(headOf(encoded, route).starts_with("GET /a%20b HTTP/1.1\r\n"));
}

TEST(RequestHead, HostModes) {
  ProxyRoute route;
  TestRequest r(nullptr, "GET", "/", {{"Host", "shop.example:8080"}});
  EXPECT_NE(headOf(r, route).find("\r\nHost: shop.example:8080\r\n"), std::string::npos);
  route.host_mode = common::config::ProxyAction::HostMode::kUpstream;
  EXPECT_NE(headOf(r, route).find("\r\nHost: api.internal:9000\r\n"), std::string::npos);
  route.host_mode = common::config::ProxyAction::HostMode::kFixed;
  route.host = "backend.example";
  std::string head = headOf(r, route);
  EXPECT_NE(head.find("\r\nHost: backend.example\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nX-Forwarded-Host: shop.example:8080\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nForwarded: for=192.0.2.1;host=\"shop.example:8080\";proto=http\r\n"),
            std::string::npos);
}

TEST(RequestHead, HopByHopFieldsAreDropped) {
  ProxyRoute route;
  TestRequest r(nullptr, "GET", "/",
                {{"Host", "h"},
                 {"Connection", "close, X-Private"},
                 {"x-private", "1"},
                 {"Keep-Alive", "300"},
                 {"Proxy-Connection", "keep-alive"},
                 {"Proxy-Authorization", "Basic eA=="},
                 {"TE", "trailers"},
                 {"Trailer", "X-T"},
                 {"Upgrade", "h2c"},
                 {"Expect", "100-continue"},
                 {"Content-Length", "0"},
                 {"X-Forwarded-Proto", "https"},
                 {"X-Forwarded-Host", "forged"},
                 {"Cookie", "a=1"}});
  EXPECT_EQ(headOf(r, route),
            "GET / HTTP/1.1\r\nHost: h\r\nCookie: a=1\r\nX-Forwarded-For: 192.0.2.1\r\n"
            "X-Forwarded-Proto: http\r\nX-Forwarded-Host: h\r\n"
            "Forwarded: for=192.0.2.1;host=h;proto=http\r\n\r\n");
}

TEST(RequestHead, ForwardingFieldsAppend) {
  ProxyRoute route;
  route.via = true;
  TestRequest r(nullptr, "GET", "/",
                {{"Host", "h"},
                 {"X-Forwarded-For", "198.51.100.1"},
                 {"X-Forwarded-For", "198.51.100.2"},
                 {"Forwarded", "for=198.51.100.1"},
                 {"Via", "1.0 edge"}});
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&r.peer.address);
  *sin6 = sockaddr_in6{};
  sin6->sin6_family = AF_INET6;
  sin6->sin6_addr.s6_addr[15] = 1;  // ::1
  r.peer.tls = true;
  std::string head = headOf(r, route);
  EXPECT_NE(head.find("\r\nX-Forwarded-For: 198.51.100.1, 198.51.100.2, ::1\r\n"),
            std::string::npos);
  EXPECT_NE(head.find("\r\nX-Forwarded-Proto: https\r\n"), std::string::npos);
  EXPECT_NE(head.find("\r\nForwarded: for=198.51.100.1, for=\"[::1]\";host=h;proto=https\r\n"),
            std::string::npos);
  EXPECT_NE(head.find("\r\nVia: 1.0 edge, 1.1 scalws\r\n"), std::string::npos);
}

TEST(RequestHead, ExactlyOneFraming) {
  ProxyRoute route;
  TestRequest chunked(nullptr, "POST", "/", {{"Transfer-Encoding", "chunked"}});
  chunked.withBody(0, true);
  uint64_t length = 99;
  EXPECT_EQ(requestFramingOf(chunked.request, length), RequestFraming::kChunked);
  RequestHeadOptions options;
  options.framing = RequestFraming::kChunked;
  std::string head = headOf(chunked, route, options);
  EXPECT_NE(head.find("\r\nTransfer-Encoding: chunked\r\n"), std::string::npos);
  EXPECT_EQ(head.find("Content-Length"), std::string::npos);

  TestRequest sized(nullptr, "PUT", "/", {{"Content-Length", "12"}});
  sized.withBody(12);
  EXPECT_EQ(requestFramingOf(sized.request, length), RequestFraming::kContentLength);
  EXPECT_EQ(length, 12u);

  TestRequest h2(nullptr, "POST", "/");
  h2.request.version = HttpVersion::kHttp2;
  h2.request.has_body = true;
  EXPECT_EQ(requestFramingOf(h2.request, length), RequestFraming::kChunked);
  TestRequest get(nullptr, "GET", "/");
  EXPECT_EQ(requestFramingOf(get.request, length), RequestFraming::kNone);
  TestRequest empty_post(nullptr, "POST", "/");
  EXPECT_EQ(requestFramingOf(empty_post.request, length), RequestFraming::kContentLength);
  EXPECT_EQ(length, 0u);
}

TEST(RequestHead, SetHeadersReplaceTheClients) {
  ProxyRoute route;
  route.set_request_headers = {{"x-site", "shop"}};
  TestRequest r(nullptr, "GET", "/", {{"Host", "h"}, {"X-Site", "forged"}});
  std::string head = headOf(r, route);
  EXPECT_EQ(head.find("forged"), std::string::npos);
  EXPECT_NE(head.find("\r\nx-site: shop\r\n"), std::string::npos);
}

TEST(RequestHead, Chunks) {
  std::string out;
  appendChunk(out, "hello");
  appendChunk(out, "");
  appendChunk(out, std::string(300, 'x'));
  EXPECT_EQ(out, "5\r\nhello\r\n12c\r\n" + std::string(300, 'x') + "\r\n");
}

}  // namespace
}  // namespace scalws::worker::proxy
