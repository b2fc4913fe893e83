// A php route's body of unknown length: collected (memory, then an unnamed file in the
// temp dir), then sent to a fake FastCGI application with its CONTENT_LENGTH, at the pool
// socket's pace; and what happens when the temp dir fails or the client leaves.
#include "worker/handlers/fastcgi/body_spool.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "common/config/config_loader.h"
#include "tests/support/fake_fastcgi_server.h"
#include "worker/config_snapshot.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::fastcgi {
namespace {

using scalws::testing::FakeFastcgiServer;

class SpoolWriter final : public ResponseWriter {
 public:
  void sendHead(const ResponseHead& head) noexcept override {
    status = head.status;
    close = head.close_connection;
  }
  void sendBody(std::string_view data, BodyLifetime) noexcept override { body.append(data); }
  void sendFile(const FileSlice&) noexcept override {}
  void finish() noexcept override {
    finished = true;
    in_flight = nullptr;
  }
  size_t queuedBytes() const noexcept override { return 0; }
  void notifyWhenWritable(WritableObserver*) noexcept override {}
  void setInFlight(InFlight* f) noexcept override { in_flight = f; }
  void setBodyReadPaused(bool paused) noexcept override { paused_calls += paused ? 1 : 0; }

  uint16_t status = 0;
  bool close = false;
  std::string body;
  bool finished = false;
  int paused_calls = 0;
  InFlight* in_flight = nullptr;
};

size_t entriesIn(const std::string& dir) {
  size_t n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

class BodySpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/scalws-spool-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(mkdir((dir_ + "/www").c_str(), 0755), 0);
    ASSERT_EQ(mkdir((dir_ + "/tmp").c_str(), 0700), 0);
    std::FILE* f = std::fopen((dir_ + "/www/up.php").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("<?php\n", f);
    std::fclose(f);
    uv_loop_init(&uv_);
    fpm_ = std::make_unique<FakeFastcgiServer>(&uv_);
  }
  void build(const std::string& temp_dir) {
    std::string toml = "[server]\nmax_body = \"4m\"\ntemp_dir = \"" + temp_dir +
                       "\"\n[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nphp = { pool = "
                       "\"main\", root = \"" +
                       dir_ + "/www\" }\n[php_pool.main]\naddress = \"" + fpm_->address() +
                       "\"\nmax_conns = 2\n";
    auto site = common::config::loadSiteConfigString(toml, "spool_test.toml");
    ASSERT_TRUE(site.ok()) << site.status().message();
    auto snap = ConfigSnapshot::build(std::move(site).value());
    ASSERT_TRUE(snap.ok()) << snap.status().message();
    snap_ = std::move(snap).value();
    loop_ = std::make_unique<WorkerLoop>(&uv_, 0, snap_, -1);
  }
  void TearDown() override {
    if (writer_.in_flight != nullptr) {
      InFlight* f = writer_.in_flight;
      writer_.in_flight = nullptr;
      f->abort();
    }
    fpm_.reset();
    if (loop_) {
      loop_->postShutdown();
      uv_run(&uv_, UV_RUN_DEFAULT);
      loop_.reset();
    }
    EXPECT_EQ(uv_loop_close(&uv_), 0);
    std::remove((dir_ + "/www/up.php").c_str());
    ::rmdir((dir_ + "/www").c_str());
    ::rmdir((dir_ + "/tmp").c_str());
    ::rmdir(dir_.c_str());
  }

  // A POST of unknown length to /up.php, handed to the route's handler.
  void start() {
    request_.method = Method::kPost;
    request_.method_name = "POST";
    request_.target = request_.raw_path = request_.path = "/up.php";
    request_.has_body = true;
    request_.chunked = true;
    request_.id = 1;
    request_.loop = loop_.get();
    request_.arena = &arena_;
    snap_->handler(0)->handle(request_, writer_);
  }
  void send(std::string_view data) {
    ASSERT_NE(request_.bodySink(), nullptr);
    request_.bodySink()->onBodyData(data);
  }
  void end() {
    ASSERT_NE(request_.bodySink(), nullptr);
    request_.bodySink()->onBodyEnd();
  }

  std::string dir_;
  uv_loop_t uv_;
  std::unique_ptr<FakeFastcgiServer> fpm_;
  std::shared_ptr<const ConfigSnapshot> snap_;
  std::unique_ptr<WorkerLoop> loop_;
  Arena arena_;
  Request request_;
  SpoolWriter writer_;
};

TEST_F(BodySpoolTest, ASmallBodyWaitsInMemoryThenGoesWithItsLength) {
  build(dir_ + "/tmp");
  start();
  EXPECT_NE(writer_.in_flight, nullptr);  // collecting
  send("hello ");
  send("chunked ");
  EXPECT_TRUE(fpm_->requests().empty());  // nothing reaches PHP before the length is known
  send("world");
  end();
  EXPECT_FALSE(request_.chunked);
  EXPECT_EQ(request_.content_length, 19u);
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->param("CONTENT_LENGTH"), "19");
  EXPECT_EQ(req->stdin_data, "hello chunked world");
  EXPECT_EQ(entriesIn(dir_ + "/tmp"), 0u);
  fpm_->respond(*req, "Content-Type: text/plain\r\n\r\nok");
  ASSERT_TRUE(fpm_->runUntil([&] { return writer_.finished; }));
  EXPECT_EQ(writer_.status, 200);
  EXPECT_EQ(writer_.body, "ok");
  EXPECT_EQ(writer_.paused_calls, 0);  // the client's body was never held back
}

TEST_F(BodySpoolTest, ALargeBodyGoesThroughAnUnnamedFileAtThePoolsPace) {
  build(dir_ + "/tmp");
  start();
  std::string body;
  for (int i = 0; i < 3 * 1024 * 1024 / 1000; ++i) body += std::string(999, 'a' + i % 26) + "\n";
  for (size_t at = 0; at < body.size(); at += 7000) send(std::string_view(body).substr(at, 7000));
  EXPECT_EQ(entriesIn(dir_ + "/tmp"), 0u);  // O_TMPFILE: nothing with a name
  end();
  FakeFastcgiServer::Request* req = fpm_->waitForRequest(2000, /*whole_body=*/false);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->param("CONTENT_LENGTH"), std::to_string(body.size()));
  fpm_->setReading(false);  // a slow PHP: the replay waits for it
  fpm_->runUntil([] { return false; }, 50);
  size_t stalled = req->stdin_data.size();
  fpm_->runUntil([] { return false; }, 50);
  EXPECT_EQ(req->stdin_data.size(), stalled);
  EXPECT_LT(stalled, body.size());
  fpm_->setReading(true);
  ASSERT_TRUE(fpm_->runUntil([&] { return req->stdin_complete; }, 5000));
  EXPECT_TRUE(req->stdin_data == body);
  fpm_->respond(*req, "\r\nstored");
  ASSERT_TRUE(fpm_->runUntil([&] { return writer_.finished; }));
  EXPECT_EQ(writer_.body, "stored");
}

TEST_F(BodySpoolTest, ATempDirThatFailsIs500) {
  build(dir_ + "/missing");
  start();
  send(std::string(BodySpool::kMemoryLimit, 'x'));  // still in memory
  EXPECT_EQ(writer_.status, 0);
  send("y");  // needs the file
  EXPECT_EQ(writer_.status, 500);
  EXPECT_TRUE(writer_.close);
  EXPECT_EQ(writer_.in_flight, nullptr);
  EXPECT_EQ(request_.bodySink(), nullptr);
  EXPECT_TRUE(fpm_->requests().empty());
}

TEST_F(BodySpoolTest, AClientGoneWhileCollectingLeavesNothing) {
  build(dir_ + "/tmp");
  start();
  send(std::string(200 * 1024, 'z'));
  InFlight* f = writer_.in_flight;
  writer_.in_flight = nullptr;
  f->abort();  // the spool and its file go
  EXPECT_TRUE(fpm_->requests().empty());
}

TEST_F(BodySpoolTest, AClientGoneWhileReplayingLeavesNothing) {
  build(dir_ + "/tmp");
  start();
  send(std::string(3 * 1024 * 1024, 'q'));
  end();
  ASSERT_NE(fpm_->waitForRequest(2000, false), nullptr);
  fpm_->setReading(false);
  InFlight* f = writer_.in_flight;  // the Exchange now
  writer_.in_flight = nullptr;
  f->abort();
  fpm_->setReading(true);
  fpm_->runUntil([] { return false; }, 20);
}

TEST_F(BodySpoolTest, AnEmptyBodyOfUnknownLengthIsLengthZero) {
  build(dir_ + "/tmp");
  start();
  end();
  FakeFastcgiServer::Request* req = fpm_->waitForRequest();
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->param("CONTENT_LENGTH"), "0");
  EXPECT_EQ(req->stdin_data, "");
  fpm_->respond(*req, "\r\n");
  ASSERT_TRUE(fpm_->runUntil([&] { return writer_.finished; }));
}

}  // namespace
}  // namespace scalws::worker::fastcgi
