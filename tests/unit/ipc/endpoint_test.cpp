// Two real endpoints over a socketpair on one real libuv loop: controller <-> worker.
#include "ipc/endpoint.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <optional>

#include "ipc/unix_socket.h"
#include "ipc_test_util.h"

namespace scalws::ipc {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;
using testing::countOpenFds;
using testing::TestLoop;

struct Channel {
  std::unique_ptr<Endpoint> controller;
  std::unique_ptr<Endpoint> worker;
};

Channel makeChannel(TestLoop& loop) {
  auto pair = socketPair();
  EXPECT_TRUE(pair.ok());
  auto controller = Endpoint::create(loop.get(), std::move(pair->first),
                                     {Role::kController, Role::kWorker, std::nullopt});
  auto worker = Endpoint::create(loop.get(), std::move(pair->second),
                                 {Role::kWorker, Role::kController, std::nullopt});
  EXPECT_TRUE(controller.ok() && worker.ok());
  return Channel{std::move(*controller), std::move(*worker)};
}

// Stores the last result a request callback got.
struct Outcome {
  std::optional<Result<Json>> result;
  Endpoint::ReplyCallback callback() {
    return [this](Result<Json> r) { result.emplace(std::move(r)); };
  }
  bool done() const { return result.has_value(); }
};

TEST(EndpointTest, RepliesFindTheirRequestsInBothDirections) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  std::vector<std::pair<Message, Replier>> held;
  ASSERT_TRUE(
      channel.worker
          ->registerHandler("config", [&](const Message& m, std::vector<UniqueFd>,
                                          Replier r) { held.emplace_back(m, std::move(r)); })
          .ok());
  ASSERT_TRUE(channel.controller
                  ->registerHandler("hello",
                                    [](const Message& m, std::vector<UniqueFd>, Replier r) {
                                      r.ok({{"welcome", m.args["pid"]}});
                                    })
                  .ok());
  std::map<int, Outcome> outcomes;
  for (int n = 1; n <= 3; ++n) {
    ASSERT_TRUE(channel.controller->request("config", {{"n", n}}, {}, outcomes[n].callback()).ok());
  }
  Outcome hello;
  ASSERT_TRUE(channel.worker->request("hello", {{"pid", 77}}, {}, hello.callback()).ok());
  ASSERT_TRUE(loop.runUntil([&] { return held.size() == 3 && hello.done(); }));
  // Answer in reverse order: correlation is by id, not by arrival.
  for (auto it = held.rbegin(); it != held.rend(); ++it) {
    it->second.ok({{"echo", it->first.args["n"]}});
  }
  ASSERT_TRUE(loop.runUntil(
      [&] { return outcomes[1].done() && outcomes[2].done() && outcomes[3].done(); }));
  for (int n = 1; n <= 3; ++n) {
    ASSERT_TRUE(outcomes[n].result->ok());
    EXPECT_EQ((**outcomes[n].result)["echo"], n);
  }
  ASSERT_TRUE(hello.result->ok());
  EXPECT_EQ((**hello.result)["welcome"], 77);
  EXPECT_NE(held[0].first.id, held[1].first.id);
}

TEST(EndpointTest, NotificationsAreNeverAnswered) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  std::vector<Json> metrics;
  ASSERT_TRUE(channel.controller
                  ->registerHandler("metrics",
                                    [&](const Message& m, std::vector<UniqueFd>, Replier r) {
                                      EXPECT_TRUE(m.isNotification());
                                      metrics.push_back(m.args);
                                      r.ok();  // a no-op: nothing goes back
                                    })
                  .ok());
  ASSERT_TRUE(channel.worker->notify("metrics", {{"requests", 1}}).ok());
  ASSERT_TRUE(channel.worker->notify("metrics", {{"requests", 2}}).ok());
  ASSERT_TRUE(loop.runUntil([&] { return metrics.size() == 2; }));
  EXPECT_EQ(metrics[1]["requests"], 2);
  // Had a reply with id 0 gone back, the worker would have closed on a bad frame.
  loop.spin(5);
  EXPECT_TRUE(channel.worker->isOpen());
  EXPECT_TRUE(channel.controller->isOpen());
}

TEST(EndpointTest, ListenerFdsTravelWithTheirRequest) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener.get(), 8), 0);
  socklen_t length = sizeof(addr);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &length), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  UniqueFd pipe_read(pipe_fds[0]);

  std::vector<UniqueFd> got;
  ASSERT_TRUE(channel.worker
                  ->registerHandler("listeners",
                                    [&](const Message& m, std::vector<UniqueFd> fds, Replier r) {
                                      EXPECT_EQ(m.fd_count, 2u);
                                      got = std::move(fds);
                                      r.ok();
                                    })
                  .ok());
  int before_send = countOpenFds();
  std::vector<UniqueFd> to_send;
  to_send.push_back(std::move(listener));
  to_send.emplace_back(pipe_fds[1]);
  Outcome outcome;
  ASSERT_TRUE(
      channel.controller->request("listeners", {}, std::move(to_send), outcome.callback()).ok());
  // The endpoint closed its copies once the frame was sent.
  EXPECT_EQ(countOpenFds(), before_send - 2);
  ASSERT_TRUE(loop.runUntil([&] { return outcome.done(); }));
  ASSERT_TRUE(outcome.result->ok());
  ASSERT_EQ(got.size(), 2u);
  sockaddr_in seen{};
  length = sizeof(seen);
  ASSERT_EQ(::getsockname(got[0].get(), reinterpret_cast<sockaddr*>(&seen), &length), 0);
  EXPECT_EQ(seen.sin_port, addr.sin_port);
  ASSERT_EQ(::write(got[1].get(), "ok", 2), 2);
  char buffer[2];
  ASSERT_EQ(::read(pipe_read.get(), buffer, 2), 2);
}

TEST(EndpointTest, ErrorRepliesBecomeStatuses) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  ASSERT_TRUE(channel.worker
                  ->registerHandler("reload",
                                    [](const Message&, std::vector<UniqueFd>, Replier r) {
                                      r.fail(common::invalidArgument("site.toml:3:1: bad key"));
                                      r.ok();  // ignored: only the first answer counts
                                    })
                  .ok());
  ASSERT_TRUE(channel.worker
                  ->registerHandler("config",
                                    [](const Message&, std::vector<UniqueFd>, Replier) {
                                      // dropped without an answer
                                    })
                  .ok());
  Outcome reload, config;
  ASSERT_TRUE(channel.controller->request("reload", {}, {}, reload.callback()).ok());
  ASSERT_TRUE(channel.controller->request("config", {}, {}, config.callback()).ok());
  ASSERT_TRUE(loop.runUntil([&] { return reload.done() && config.done(); }));
  ASSERT_FALSE(reload.result->ok());
  EXPECT_EQ(reload.result->status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(reload.result->status().message(), "site.toml:3:1: bad key");
  ASSERT_FALSE(config.result->ok());
  EXPECT_EQ(config.result->status().code(), StatusCode::kInternal);
}

TEST(EndpointTest, UnregisteredAndWrongWayOpsAreUnknown) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  // The worker accepts "stop" by the table but registered no handler for it.
  Outcome stop;
  ASSERT_TRUE(channel.controller->request("stop", {}, {}, stop.callback()).ok());
  ASSERT_TRUE(loop.runUntil([&] { return stop.done(); }));
  ASSERT_FALSE(stop.result->ok());
  EXPECT_EQ(stop.result->status().code(), StatusCode::kNotFound);  // unknown_op
  EXPECT_TRUE(channel.worker->isOpen());
  EXPECT_TRUE(channel.controller->isOpen());
}

TEST(EndpointTest, SendingSideChecksTheOpTable) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  auto ignore = [](Result<Json>) { ADD_FAILURE() << "callback of a refused request"; };
  EXPECT_FALSE(channel.controller->request("hello", {}, {}, ignore).ok());    // wrong way
  EXPECT_FALSE(channel.controller->request("metrics", {}, {}, ignore).ok());  // wrong way
  EXPECT_FALSE(channel.worker->request("metrics", {}, {}, ignore).ok());      // notification
  EXPECT_FALSE(channel.worker->notify("hello", {}).ok());                     // wants a reply
  EXPECT_FALSE(channel.controller->request("no.such", {}, {}, ignore).ok());
  EXPECT_FALSE(channel.controller->request("config", Json::array(), {}, ignore).ok());
  EXPECT_FALSE(channel.controller->request("instance.add", {}, {}, ignore).ok());  // ctl's op
  std::vector<UniqueFd> too_many;
  for (size_t i = 0; i <= kMaxFdsPerFrame; ++i) too_many.emplace_back(::dup(0));
  EXPECT_FALSE(channel.controller->request("listeners", {}, std::move(too_many), ignore).ok());
  Json huge = {{"pad", std::string(kMaxFramePayload, 'x')}};
  EXPECT_FALSE(channel.controller->request("config", huge, {}, ignore).ok());
  auto handler = [](const Message&, std::vector<UniqueFd>, Replier) {};
  EXPECT_FALSE(channel.worker->registerHandler("hello", handler).ok());  // its own op
  EXPECT_FALSE(channel.controller->registerHandler("config", handler).ok());
  EXPECT_FALSE(
      channel.controller->registerHandler("instance.add", handler).ok());  // not from a worker
  loop.spin();
}

TEST(EndpointTest, LargeFramesQueueAndAllArrive) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  std::vector<size_t> sizes;
  ASSERT_TRUE(channel.worker
                  ->registerHandler("config",
                                    [&](const Message& m, std::vector<UniqueFd>, Replier r) {
                                      sizes.push_back(m.args["pad"].get<std::string>().size());
                                      r.ok({{"n", m.args["n"]}});
                                    })
                  .ok());
  constexpr int kCount = 8;
  std::map<int, Outcome> outcomes;
  for (int n = 0; n < kCount; ++n) {
    Json args = {{"n", n}, {"pad", std::string(900 * 1024 + n, 'a' + n)}};
    ASSERT_TRUE(channel.controller->request("config", args, {}, outcomes[n].callback()).ok());
  }
  // More than a socket buffer: the rest waits in the queue until the worker reads.
  EXPECT_GT(channel.controller->queuedBytes(), 0u);
  // 7 MB of JSON each way: under ASan on a loaded 2-core machine that takes seconds, so the
  // bound is generous (it only stops a hang, it measures nothing).
  ASSERT_TRUE(loop.runUntil(
      [&] {
        for (auto& [n, o] : outcomes) {
          if (!o.done()) return false;
        }
        return true;
      },
      std::chrono::seconds(60)));
  ASSERT_EQ(sizes.size(), size_t{kCount});
  for (int n = 0; n < kCount; ++n) {
    EXPECT_EQ(sizes[n], size_t{900 * 1024} + n);
    ASSERT_TRUE(outcomes[n].result->ok());
    EXPECT_EQ((**outcomes[n].result)["n"], n);
  }
  EXPECT_EQ(channel.controller->queuedBytes(), 0u);
}

TEST(EndpointTest, APeerThatDoesNotReadIsCutOffAtTheQueueLimit) {
  TestLoop loop;
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  auto controller = Endpoint::create(loop.get(), std::move(pair->first),
                                     {Role::kController, Role::kWorker, std::nullopt});
  ASSERT_TRUE(controller.ok());
  Json args = {{"pad", std::string(1000 * 1000, 'x')}};
  Status last;
  for (int i = 0; i < 64 && last.ok(); ++i) {
    last = (*controller)->request("config", args, {}, [](Result<Json>) {});
  }
  EXPECT_EQ(last.code(), StatusCode::kResourceExhausted);
}

TEST(EndpointTest, PeerGoneFailsPendingRequestsThenFiresOnClose) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  std::optional<Replier> kept;
  ASSERT_TRUE(channel.worker
                  ->registerHandler("stop", [&](const Message&, std::vector<UniqueFd>,
                                                Replier r) { kept.emplace(std::move(r)); })
                  .ok());
  std::vector<std::string> order;
  std::optional<Status> closed_with;
  channel.controller->onClose([&](const Status& why) {
    order.push_back("close");
    closed_with = why;
  });
  Outcome stop;
  ASSERT_TRUE(channel.controller
                  ->request("stop", {}, {},
                            [&](Result<Json> r) {
                              order.push_back("reply");
                              stop.result.emplace(std::move(r));
                            })
                  .ok());
  ASSERT_TRUE(loop.runUntil([&] { return kept.has_value(); }));
  channel.worker.reset();
  kept->ok();  // its endpoint is gone: a no-op
  ASSERT_TRUE(loop.runUntil([&] { return closed_with.has_value(); }));
  EXPECT_EQ(order, (std::vector<std::string>{"reply", "close"}));
  EXPECT_EQ(stop.result->status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(closed_with->ok()) << "an orderly end of stream: " << closed_with->message();
  EXPECT_FALSE(channel.controller->isOpen());
  EXPECT_FALSE(channel.controller->notify("metrics", {}).ok());
}

TEST(EndpointTest, OwnerCloseFailsPendingWithoutOnClose) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  bool on_close_fired = false;
  channel.controller->onClose([&](const Status&) { on_close_fired = true; });
  Outcome config;
  ASSERT_TRUE(channel.controller->request("config", {}, {}, config.callback()).ok());
  channel.controller->close();
  ASSERT_TRUE(config.done());
  EXPECT_EQ(config.result->status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(on_close_fired);
  EXPECT_FALSE(channel.controller->request("config", {}, {}, config.callback()).ok());
  channel.controller->close();  // idempotent
  loop.spin();
}

TEST(EndpointTest, DestroyingFromInsideItsOwnCallbacksIsSafe) {
  TestLoop loop;
  Channel channel = makeChannel(loop);
  bool handled = false;
  ASSERT_TRUE(channel.worker
                  ->registerHandler("stop",
                                    [&](const Message&, std::vector<UniqueFd>, Replier r) {
                                      r.ok();
                                      channel.worker.reset();  // the endpoint running this
                                      handled = true;
                                    })
                  .ok());
  bool closed = false;
  channel.controller->onClose([&](const Status&) {
    channel.controller.reset();
    closed = true;
  });
  Outcome stop;
  ASSERT_TRUE(channel.controller->request("stop", {}, {}, stop.callback()).ok());
  ASSERT_TRUE(loop.runUntil([&] { return handled && closed; }));
  ASSERT_TRUE(stop.done());
  EXPECT_TRUE(stop.result->ok());  // the reply left before the worker went away
  EXPECT_EQ(channel.worker, nullptr);
  EXPECT_EQ(channel.controller, nullptr);
  // ~TestLoop checks that every handle was closed.
}

TEST(EndpointTest, ChannelsLeakNoFds) {
  TestLoop loop;  // libuv's own fds (epoll, a process-wide signal pipe) exist before the count
  int before = countOpenFds();
  {
    Channel channel = makeChannel(loop);
    Outcome outcome;
    ASSERT_TRUE(channel.worker
                    ->registerHandler(
                        "config", [](const Message&, std::vector<UniqueFd>, Replier r) { r.ok(); })
                    .ok());
    ASSERT_TRUE(channel.controller->request("config", {}, {}, outcome.callback()).ok());
    ASSERT_TRUE(loop.runUntil([&] { return outcome.done(); }));
    EXPECT_EQ(countOpenFds(), before + 2);
  }
  loop.spin();
  EXPECT_EQ(countOpenFds(), before);
}

}  // namespace
}  // namespace scalws::ipc
