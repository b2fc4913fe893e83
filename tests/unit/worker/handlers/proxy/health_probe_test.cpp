// Active health checks against FakeUpstream: failed probes take a server out, passed ones
// bring it back, whatever the requests in between do.
#include "worker/handlers/proxy/health_probe.h"

#include <gtest/gtest.h>

#include "tests/support/fake_upstream.h"
#include "tests/unit/worker/handlers/proxy/proxy_test_kit.h"

namespace scalws::worker::proxy {
namespace {

using scalws::testing::FakeUpstream;
using testing::LoopFixture;
using testing::proxySnapshot;
using testing::RecordingWriter;
using testing::TestRequest;

class HealthProbeTest : public LoopFixture {
 protected:
  // Answers every waiting probe with `status`; other requests with 200. Returns the probes
  // answered.
  int answer(FakeUpstream& up, int status) {
    int probes = 0;
    while (up.pendingRequests() > 0) {
      auto r = up.waitForRequest();
      bool probe = r->requestLine() == "GET /healthz HTTP/1.1";
      if (probe) {
        EXPECT_EQ(r->header("Connection"), "close");
        ++probes;
      }
      int code = probe ? status : 200;
      up.respond(r->connection, "HTTP/1.1 " + std::to_string(code) +
                                    " X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
    }
    return probes;
  }
  uint16_t get(FakeUpstream& up) {
    TestRequest r(loop_.get());
    RecordingWriter w;
    handler().handle(r.request, w);
    runUntil([&] {
      answer(up, 200);
      return w.done();
    });
    return w.status;
  }
};

TEST_F(HealthProbeTest, ProbesDecideWhetherAServerServes) {
  FakeUpstream up;
  startLoop(proxySnapshot("servers = [\"" + up.address() +
                          "\"]\nhealth = { path = \"/healthz\", interval = \"50ms\", timeout = "
                          "\"1s\", fails = 2, passes = 2, expect = \"2xx\" }\n"));
  EXPECT_EQ(get(up), 200);  // the loop's first request starts its probes
  int failed = 0;
  ASSERT_TRUE(runUntil([&] {
    failed += answer(up, 500);
    return failed >= 2;
  }));
  runFor(std::chrono::milliseconds(20));
  EXPECT_EQ(get(up), 503);
  int passed = 0;
  ASSERT_TRUE(runUntil([&] {
    passed += answer(up, 299);
    return passed >= 2;
  }));
  runFor(std::chrono::milliseconds(20));
  EXPECT_EQ(get(up), 200);
}

TEST_F(HealthProbeTest, AnUnreachableServerFailsItsProbes) {
  FakeUpstream gone;
  std::string address = gone.address();
  gone.stopListening();
  FakeUpstream up;
  startLoop(proxySnapshot("servers = [\"" + address + "\", \"" + up.address() +
                          "\"]\nmax_fails = 0\nretries = 0\nhealth = { path = \"/healthz\", "
                          "interval = \"30ms\", fails = 1, passes = 1 }\n"));
  EXPECT_NE(get(up), 0);  // starts the probes (it may hit the dead server: no retries)
  runUntil(
      [&] {
        answer(up, 200);
        return false;
      },
      std::chrono::milliseconds(300));
  // The dead server is out: every request lands on the live one.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(get(up), 200) << i;
}

}  // namespace
}  // namespace scalws::worker::proxy
