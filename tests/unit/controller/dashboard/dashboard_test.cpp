// The dashboard's routing and headers (dashboardAnswer), and what the embedded page may
// and may not hold: small, nothing external, no innerHTML.
#include "controller/dashboard/dashboard.h"

#include <gtest/gtest.h>

#include "controller/dashboard/dashboard_page.h"

namespace scalws::controller::dashboard {
namespace {

using http::HttpAnswer;
using http::HttpRequest;

HttpAnswer answer(const std::string& head, int* api_calls = nullptr) {
  auto r = http::parseRequestHead(head);
  EXPECT_TRUE(r.ok()) << head;
  return dashboardAnswer(*r, [api_calls](const HttpRequest& req) {
    if (api_calls != nullptr) ++*api_calls;
    HttpAnswer a;
    a.content_type = "application/json";
    a.body = "{\"path\":\"" + req.path + "\"}";
    return a;
  });
}

std::string header(const HttpAnswer& a, const std::string& name) {
  for (const auto& [n, v] : a.headers) {
    if (n == name) return v;
  }
  return "";
}

TEST(DashboardAnswer, ServesThePageItsPartsAndTheApi) {
  HttpAnswer page = answer("GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(page.body, pageHtml());
  EXPECT_EQ(answer("GET /dashboard.js HTTP/1.1\r\n\r\n").content_type,
            "text/javascript; charset=utf-8");
  EXPECT_EQ(answer("GET /dashboard.css HTTP/1.1\r\n\r\n").body, pageCss());
  int calls = 0;
  HttpAnswer api = answer("GET /api/v1/overview?x=1 HTTP/1.1\r\n\r\n", &calls);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(api.body, "{\"path\":\"/api/v1/overview\"}");
  EXPECT_EQ(header(api, "Cache-Control"), "no-store");
  HttpAnswer head = answer("HEAD /api/v1/overview HTTP/1.1\r\n\r\n", &calls);
  EXPECT_TRUE(head.head);
  EXPECT_EQ(head.status, 200);
}

TEST(DashboardAnswer, ReadOnlyAndNothingElse) {
  int calls = 0;
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"}) {
    HttpAnswer a = answer(std::string(method) + " /api/v1/overview HTTP/1.1\r\n\r\n", &calls);
    EXPECT_EQ(a.status, 405) << method;
    EXPECT_EQ(header(a, "Allow"), "GET, HEAD");
  }
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(answer("GET /etc/passwd HTTP/1.1\r\n\r\n").status, 404);
  EXPECT_EQ(answer("GET /api HTTP/1.1\r\n\r\n").status, 404);
  EXPECT_EQ(answer("GET /metrics HTTP/1.1\r\n\r\n").status, 404);
}

TEST(DashboardAnswer, EveryAnswerCarriesTheSecurityHeaders) {
  for (const char* head : {"GET / HTTP/1.1\r\n\r\n", "GET /dashboard.js HTTP/1.1\r\n\r\n",
                           "GET /api/v1/overview HTTP/1.1\r\n\r\n", "GET /x HTTP/1.1\r\n\r\n",
                           "POST / HTTP/1.1\r\n\r\n"}) {
    HttpAnswer a = answer(head);
    std::string csp = header(a, "Content-Security-Policy");
    EXPECT_EQ(csp.rfind("default-src 'none';", 0), 0u) << head;
    EXPECT_EQ(csp.find("unsafe"), std::string::npos);
    EXPECT_EQ(csp.find("http"), std::string::npos);
    EXPECT_EQ(header(a, "X-Content-Type-Options"), "nosniff") << head;
    EXPECT_EQ(header(a, "X-Frame-Options"), "DENY") << head;
  }
}

TEST(DashboardPage, SmallSelfContainedAndWithoutInnerHtml) {
  size_t total = pageHtml().size() + pageCss().size() + pageScript().size();
  EXPECT_LT(total, 64u * 1024) << "the page must stay small";
  for (std::string_view part : {pageHtml(), pageCss(), pageScript()}) {
    EXPECT_EQ(part.find("http://"), std::string_view::npos);
    EXPECT_EQ(part.find("https://"), std::string_view::npos);
    EXPECT_EQ(part.find("//cdn"), std::string_view::npos);
    EXPECT_EQ(part.find("innerHTML"), std::string_view::npos);
    EXPECT_EQ(part.find("outerHTML"), std::string_view::npos);
    EXPECT_EQ(part.find("insertAdjacentHTML"), std::string_view::npos);
    EXPECT_EQ(part.find("document.write"), std::string_view::npos);
    EXPECT_EQ(part.find("eval("), std::string_view::npos);
  }
  // No inline script or style: the CSP would block them.
  EXPECT_EQ(pageHtml().find("<script>"), std::string_view::npos);
  EXPECT_EQ(pageHtml().find("<style"), std::string_view::npos);
  EXPECT_EQ(pageHtml().find("style="), std::string_view::npos);
  for (const char* handler : {" onclick", " onload", " onerror", " onmouse", " onfocus"}) {
    EXPECT_EQ(pageHtml().find(handler), std::string_view::npos) << handler;
  }
  EXPECT_NE(pageHtml().find("src=\"/dashboard.js\""), std::string_view::npos);
  EXPECT_NE(pageScript().find("/api/v1/overview"), std::string_view::npos);
}

}  // namespace
}  // namespace scalws::controller::dashboard
