// The CGI params of a request: meta-variables, HTTP_* headers, httpoxy, collisions.
#include "worker/handlers/fastcgi/cgi_params.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace scalws::worker::fastcgi {
namespace {

size_t readLength(const std::string& s, size_t& pos) {
  auto b = static_cast<unsigned char>(s[pos]);
  if (b < 128) {
    ++pos;
    return b;
  }
  size_t n = ((b & 0x7fu) << 24) | (static_cast<unsigned char>(s[pos + 1]) << 16) |
             (static_cast<unsigned char>(s[pos + 2]) << 8) | static_cast<unsigned char>(s[pos + 3]);
  pos += 4;
  return n;
}

// Decodes pairs; fails the test on a duplicate name (PHP would keep only one).
std::map<std::string, std::string> decode(const std::string& s) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = readLength(s, pos);
    size_t vl = readLength(s, pos);
    std::string name = s.substr(pos, nl);
    std::string value = s.substr(pos + nl, vl);
    pos += nl + vl;
    EXPECT_TRUE(out.emplace(name, value).second) << "duplicate " << name;
  }
  EXPECT_EQ(pos, s.size());
  return out;
}

class CgiParamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto* sin = reinterpret_cast<sockaddr_in*>(&peer_.address);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(40123);
    inet_pton(AF_INET, "10.1.2.3", &sin->sin_addr);
    peer_.local_port = 8080;
    r_.peer = &peer_;
    r_.method_name = "POST";
    r_.target = "/app/index.php/a%20b?x=1&y=2";
    r_.raw_path = "/app/index.php/a%20b";
    r_.path = "/app/index.php/a b";
    r_.query = "x=1&y=2";
    r_.host = "example.com";
    r_.has_body = true;
    r_.content_length = 11;
  }
  std::map<std::string, std::string> params() {
    std::string out;
    r_.headers = headers_;
    appendCgiParams(out, r_, script_, CgiSite{"/srv/www", "scalws"});
    return decode(out);
  }

  PeerInfo peer_;
  Request r_;
  ScriptMatch script_{"/app/index.php", "/a b", false};
  std::string long_value_ = std::string(200, 'L');
  std::vector<HeaderField> headers_ = {{"Host", "example.com:8080"},
                                       {"Content-Type", "application/x-www-form-urlencoded"},
                                       {"Content-Length", "11"},
                                       {"User-Agent", "test/1"}};
};

TEST_F(CgiParamsTest, MetaVariables) {
  auto p = params();
  EXPECT_EQ(p["GATEWAY_INTERFACE"], "CGI/1.1");
  EXPECT_EQ(p["SERVER_SOFTWARE"], "scalws");
  EXPECT_EQ(p["SERVER_PROTOCOL"], "HTTP/1.1");
  EXPECT_EQ(p["REQUEST_METHOD"], "POST");
  EXPECT_EQ(p["REQUEST_URI"], "/app/index.php/a%20b?x=1&y=2");
  EXPECT_EQ(p["QUERY_STRING"], "x=1&y=2");
  EXPECT_EQ(p["DOCUMENT_ROOT"], "/srv/www");
  EXPECT_EQ(p["SCRIPT_NAME"], "/app/index.php");
  EXPECT_EQ(p["SCRIPT_FILENAME"], "/srv/www/app/index.php");
  EXPECT_EQ(p["PATH_INFO"], "/a b");
  EXPECT_EQ(p["PATH_TRANSLATED"], "/srv/www/a b");
  EXPECT_EQ(p["SERVER_NAME"], "example.com");
  EXPECT_EQ(p["SERVER_PORT"], "8080");
  EXPECT_EQ(p["REMOTE_ADDR"], "10.1.2.3");
  EXPECT_EQ(p["REMOTE_PORT"], "40123");
  EXPECT_EQ(p["CONTENT_TYPE"], "application/x-www-form-urlencoded");
  EXPECT_EQ(p["CONTENT_LENGTH"], "11");
  EXPECT_EQ(p["REQUEST_SCHEME"], "http");
  EXPECT_EQ(p.count("HTTPS"), 0u);
  EXPECT_EQ(p["HTTP_HOST"], "example.com:8080");
  EXPECT_EQ(p["HTTP_USER_AGENT"], "test/1");
  EXPECT_EQ(p.count("HTTP_CONTENT_TYPE"), 0u);
  EXPECT_EQ(p.count("HTTP_CONTENT_LENGTH"), 0u);
}

TEST_F(CgiParamsTest, TlsAndNoPathInfo) {
  peer_.tls = true;
  script_.path_info = {};
  r_.has_body = false;
  auto p = params();
  EXPECT_EQ(p["HTTPS"], "on");
  EXPECT_EQ(p["REQUEST_SCHEME"], "https");
  EXPECT_EQ(p.count("PATH_INFO"), 0u);
  EXPECT_EQ(p.count("PATH_TRANSLATED"), 0u);
  EXPECT_EQ(p["CONTENT_LENGTH"], "");
}

TEST_F(CgiParamsTest, HttpoxyAndCollidingNamesAreNotPassed) {
  headers_.push_back({"Proxy", "http://evil:3128"});
  headers_.push_back({"PROXY", "http://evil:3128"});
  headers_.push_back({"X_Forwarded_For", "1.2.3.4"});  // would collide with X-Forwarded-For
  headers_.push_back({"X-Forwarded-For", "5.6.7.8"});
  headers_.push_back({"X.Dot", "1"});
  auto p = params();
  EXPECT_EQ(p.count("HTTP_PROXY"), 0u);
  EXPECT_EQ(p["HTTP_X_FORWARDED_FOR"], "5.6.7.8");
  EXPECT_EQ(p.count("HTTP_X.DOT"), 0u);
}

TEST_F(CgiParamsTest, RepeatedHeadersAreJoined) {
  headers_.push_back({"Accept", "text/html"});
  headers_.push_back({"Cookie", "a=1"});
  headers_.push_back({"accept", "application/json"});
  headers_.push_back({"cookie", "b=2"});
  headers_.push_back({"X-Long", long_value_});
  auto p = params();
  EXPECT_EQ(p["HTTP_ACCEPT"], "text/html, application/json");
  EXPECT_EQ(p["HTTP_COOKIE"], "a=1; b=2");
  EXPECT_EQ(p["HTTP_X_LONG"], std::string(200, 'L'));
}

TEST_F(CgiParamsTest, RequestUriFromAbsoluteFormAndMappedIpv6) {
  r_.target = "http://example.com/app/index.php/a%20b?x=1&y=2";
  sockaddr_in6 sin6{};
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(5);
  inet_pton(AF_INET6, "::ffff:192.0.2.7", &sin6.sin6_addr);
  std::memcpy(&peer_.address, &sin6, sizeof(sin6));
  auto p = params();
  EXPECT_EQ(p["REQUEST_URI"], "/app/index.php/a%20b?x=1&y=2");
  EXPECT_EQ(p["REMOTE_ADDR"], "192.0.2.7");
  EXPECT_EQ(p["REMOTE_PORT"], "5");
}

}  // namespace
}  // namespace scalws::worker::fastcgi
