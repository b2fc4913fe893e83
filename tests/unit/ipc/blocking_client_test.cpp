// scalwsctl's blocking client against a real controller-side Endpoint on a real Unix
// socket: in a thread for the ordinary cases, and in the parent of a forked, setuid child
// for the permission cases (SO_PEERCRED records who connected).
#include "ipc/blocking_client.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "ipc/endpoint.h"
#include "ipc/unix_socket.h"
#include "ipc_test_util.h"

namespace scalws::ipc {
namespace {

using common::StatusCode;
using common::UniqueFd;
using testing::TempDir;
using testing::TestLoop;
using namespace std::chrono_literals;

void registerControllerHandlers(Endpoint& endpoint, std::vector<Replier>& held) {
  auto ok = [](const Message& m, std::vector<UniqueFd>, Replier r) {
    r.ok({{"op", m.op}, {"args", m.args}});
  };
  ASSERT_TRUE(endpoint.registerHandler("status", ok).ok());
  ASSERT_TRUE(endpoint.registerHandler("instance.add", ok).ok());
  ASSERT_TRUE(endpoint
                  .registerHandler("instance.show",
                                   [](const Message&, std::vector<UniqueFd>, Replier r) {
                                     r.fail(errc::kNotFound, "no instance 'web'");
                                   })
                  .ok());
  ASSERT_TRUE(endpoint
                  .registerHandler("instance.start",
                                   [&held](const Message&, std::vector<UniqueFd>, Replier r) {
                                     held.push_back(std::move(r));  // never answered in time
                                   })
                  .ok());
  ASSERT_TRUE(endpoint
                  .registerHandler("instance.remove",
                                   [&endpoint](const Message&, std::vector<UniqueFd>, Replier) {
                                     endpoint.close();  // hang up without an answer
                                   })
                  .ok());
}

// Accepts one connection on `listener` and serves it on its own loop until it closes
// (or `stop` is set).
void serveOne(int listener, std::optional<gid_t> admin_gid, const std::atomic<bool>& stop) {
  pollfd pfd{listener, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  UniqueFd conn(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  ASSERT_TRUE(conn);
  TestLoop loop;
  std::vector<Replier> held;
  auto endpoint =
      Endpoint::create(loop.get(), std::move(conn), {Role::kController, Role::kCtl, admin_gid});
  ASSERT_TRUE(endpoint.ok());
  registerControllerHandlers(**endpoint, held);
  loop.runUntil([&] { return stop || !(*endpoint)->isOpen(); }, 20s);
}

class ControllerThread {
 public:
  explicit ControllerThread(const std::string& path) {
    auto listener = listenUnix(path);
    EXPECT_TRUE(listener.ok());
    listener_ = std::move(*listener);
    thread_ = std::thread([this] { serveOne(listener_.get(), std::nullopt, stop_); });
  }
  ~ControllerThread() {
    stop_ = true;
    thread_.join();
  }

 private:
  UniqueFd listener_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// A controller endpoint serving one connection in a thread, and a client connected to it.
class ConnectedClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = BlockingClient::connect(dir_.file("control.sock"), 2s);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_.emplace(std::move(*client));
  }

  TempDir dir_;
  ControllerThread controller_{dir_.file("control.sock")};
  std::optional<BlockingClient> client_;
};

TEST_F(ConnectedClientTest, CallsGetTheirResultsOnOneConnection) {
  auto status = client_->call("status", {}, 5s);
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_EQ((*status)["op"], "status");
  auto added = client_->call("instance.add", {{"name", "web"}}, 5s);
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ((*added)["args"]["name"], "web");
}

TEST_F(ConnectedClientTest, ErrorReplyIsAStatusAndTheConnectionStaysUsable) {
  auto shown = client_->call("instance.show", {{"name", "web"}}, 5s);
  ASSERT_FALSE(shown.ok());
  EXPECT_EQ(shown.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(shown.status().message(), "no instance 'web'");
  EXPECT_TRUE(client_->connected());
  EXPECT_TRUE(client_->call("status", {}, 5s).ok());
}

TEST_F(ConnectedClientTest, NoReplyInTimeIsATimeoutAndEndsTheConnection) {
  auto started = std::chrono::steady_clock::now();
  auto start = client_->call("instance.start", {{"name", "web"}}, 200ms);
  auto waited = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(start.ok());
  EXPECT_EQ(start.status().code(), StatusCode::kTimeout);
  EXPECT_GE(waited, 200ms);
  EXPECT_FALSE(client_->connected());
  EXPECT_EQ(client_->call("status", {}, 1s).status().code(), StatusCode::kUnavailable);
}

TEST_F(ConnectedClientTest, ControllerHangingUpIsUnavailable) {
  auto removed = client_->call("instance.remove", {{"name", "web"}}, 5s);
  ASSERT_FALSE(removed.ok());
  EXPECT_EQ(removed.status().code(), StatusCode::kUnavailable);
}

TEST_F(ConnectedClientTest, OnlyScalwsctlRequestsAreSent) {
  for (const char* op : {"config", "metrics", "hello", "no.such"}) {
    auto result = client_->call(op, {}, 1s);
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << op;
  }
  EXPECT_EQ(client_->call("status", Json::array(), 1s).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(client_->call("status", {}, 5s).ok());  // nothing was sent for those
}

TEST(BlockingClientTest, ConnectToNothingFails) {
  TempDir dir;
  auto client = BlockingClient::connect(dir.file("absent.sock"), 100ms);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kNotFound);
}

// Forks a child that becomes uid:gid (no supplementary groups), connects, and calls a
// write op then a read op. Returns the child's two results as wire-ish codes.
struct ChildResult {
  StatusCode write = StatusCode::kInternal;
  StatusCode read = StatusCode::kInternal;
};

ChildResult callAs(uid_t uid, gid_t gid, std::optional<gid_t> admin_gid) {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  std::string path = dir.file("control.sock");
  auto listener = listenUnix(path);
  EXPECT_TRUE(listener.ok());
  ::chmod(path.c_str(), 0666);
  int report[2];
  EXPECT_EQ(::pipe(report), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::close(report[0]);
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) _exit(3);
    auto client = BlockingClient::connect(path, 2s);
    if (!client.ok()) _exit(4);
    StatusCode codes[2] = {client->call("instance.add", {{"name", "web"}}, 5s).status().code(),
                           client->call("status", {}, 5s).status().code()};
    if (::write(report[1], codes, sizeof(codes)) != sizeof(codes)) _exit(5);
    _exit(0);
  }
  ::close(report[1]);
  std::atomic<bool> stop{false};
  serveOne(listener->get(), admin_gid, stop);  // until the child hangs up
  int wstatus = 0;
  EXPECT_EQ(::waitpid(child, &wstatus, 0), child);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << "child status " << wstatus;
  ChildResult result;
  StatusCode codes[2];
  if (::read(report[0], codes, sizeof(codes)) == sizeof(codes)) result = {codes[0], codes[1]};
  ::close(report[0]);
  return result;
}

TEST(BlockingClientTest, UnprivilegedPeerMayReadButNotWrite) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to become another user";
  ChildResult nobody = callAs(65534, 65534, gid_t{4242});
  EXPECT_EQ(nobody.write, StatusCode::kPermissionDenied);
  EXPECT_EQ(nobody.read, StatusCode::kOk);
}

TEST(BlockingClientTest, AdminGroupPeerMayWrite) {
  if (::getuid() != 0) GTEST_SKIP() << "needs root to become another user";
  // A uid without a passwd entry whose primary group is the admin group.
  ChildResult member = callAs(4243, 4242, gid_t{4242});
  EXPECT_EQ(member.write, StatusCode::kOk);
  EXPECT_EQ(member.read, StatusCode::kOk);
  // Same uid, another group: refused.
  ChildResult other = callAs(4243, 4244, gid_t{4242});
  EXPECT_EQ(other.write, StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace scalws::ipc
