#include "worker/http/error_response.h"

#include <gtest/gtest.h>

#include "tests/unit/worker/handlers/static/fake_writer.h"

namespace scalws::worker {
namespace {

using testing::FakeWriter;

TEST(ErrorResponseTest, AnErrorIsASmallPageWithItsStatus) {
  Request request;
  FakeWriter w;
  sendError(request, w, 404);
  EXPECT_EQ(w.status, 404);
  EXPECT_EQ(w.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(w.body.find("404 Not Found"), std::string::npos);
  EXPECT_EQ(w.content_length, w.body.size());
  EXPECT_EQ(w.finished, 1);
}

TEST(ErrorResponseTest, BackendFailureBeforeTheHeadIsItsPage) {
  Request request;
  FakeWriter bad_gateway;
  sendBackendFailure(request, bad_gateway, 502, false);
  EXPECT_EQ(bad_gateway.status, 502);
  EXPECT_FALSE(bad_gateway.header("retry-after").has_value());

  FakeWriter unavailable;
  sendBackendFailure(request, unavailable, 503, false);
  EXPECT_EQ(unavailable.status, 503);
  EXPECT_EQ(unavailable.header("retry-after"), "1");
}

TEST(ErrorResponseTest, BackendFailureAfterTheHeadCutsTheResponseShort) {
  Request request;
  FakeWriter w;
  sendBackendFailure(request, w, 502, true);
  EXPECT_EQ(w.heads, 0);  // no second head, no error page glued to a body
  EXPECT_TRUE(w.body.empty());
  EXPECT_EQ(w.finished, 1);  // abortResponse: the connection ends the response
}

}  // namespace
}  // namespace scalws::worker
