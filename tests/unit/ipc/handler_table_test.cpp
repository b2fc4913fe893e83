// A handler table registers every row on an endpoint, hands each handler its fds, and is
// refused where the op table says the op does not travel peer -> local.
#include "ipc/handler_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <optional>

#include "ipc/unix_socket.h"
#include "tests/unit/ipc/ipc_test_util.h"

namespace scalws::ipc {
namespace {

using common::Result;

struct Owner {
  void onHello(Incoming& in, Replier out) {
    hellos.push_back(in.args());
    out.ok({{"seen", hellos.size()}});
  }
  void onReady(Incoming& in, Replier out) {
    fds = in.fds.size();
    out.fail(errc::kFailed, "not today");
  }
  std::vector<Json> hellos;
  size_t fds = 0;
};

constexpr OpHandler<Owner> kTable[] = {
    {op::kHello, &Owner::onHello},
    {op::kReady, &Owner::onReady},
};

TEST(HandlerTableTest, RowsAnswerAndUnknownOpsDoNot) {
  testing::TestLoop loop;
  auto pair = socketPair();
  ASSERT_TRUE(pair.ok());
  EndpointOptions controller;  // controller <-> worker
  EndpointOptions worker;
  worker.local = Role::kWorker;
  worker.peer = Role::kController;
  auto c = Endpoint::create(loop.get(), std::move(pair->first), controller);
  auto w = Endpoint::create(loop.get(), std::move(pair->second), worker);
  ASSERT_TRUE(c.ok() && w.ok());
  Owner owner;
  ASSERT_TRUE(registerHandlers<Owner>(**c, owner, kTable).ok());

  std::optional<Result<Json>> hello;
  ASSERT_TRUE((*w)->request(op::kHello, {{"pid", 1}}, {},
                            [&](Result<Json> r) { hello.emplace(std::move(r)); })
                  .ok());
  ASSERT_TRUE(loop.runUntil([&] { return hello.has_value(); }));
  ASSERT_TRUE(hello->ok());
  EXPECT_EQ((**hello)["seen"], 1);

  std::vector<common::UniqueFd> fds;
  fds.emplace_back(::dup(0));
  std::optional<Result<Json>> ready;
  ASSERT_TRUE((*w)->request(op::kReady, Json::object(), std::move(fds),
                            [&](Result<Json> r) { ready.emplace(std::move(r)); })
                  .ok());
  ASSERT_TRUE(loop.runUntil([&] { return ready.has_value(); }));
  EXPECT_FALSE(ready->ok());
  EXPECT_EQ(ready->status().message(), "not today");
  EXPECT_EQ(owner.fds, 1u);

  // A worker may not be asked for `hello` by the controller: the table cannot say otherwise.
  Owner other;
  EXPECT_FALSE(registerHandlers<Owner>(**w, other, kTable).ok());
  c->reset();
  w->reset();
  loop.spin();
}

}  // namespace
}  // namespace scalws::ipc
