// Helpers shared by the ipc unit tests: raw frames, fd counting, a loop that runs until
// something happened.
#pragma once

#include <dirent.h>
#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "ipc/frame.h"
#include "ipc/message.h"

namespace scalws::ipc::testing {

// Open fds of this process (each gtest case runs in its own process under ctest).
inline int countOpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  int count = 0;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count - 1;  // the DIR's own fd
}

// Just a length prefix, for lengths the encoder would never write.
inline std::string lengthPrefix(uint32_t n) {
  return std::string{static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                     static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
}

// A frame with an arbitrary payload (the length prefix is computed).
inline std::string rawFrame(std::string_view payload) {
  return lengthPrefix(static_cast<uint32_t>(payload.size())) + std::string(payload);
}

inline std::string encoded(const Message& message) {
  std::string out;
  EXPECT_TRUE(encodeFrame(message, out).ok());
  return out;
}

// A fresh directory under $TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "scalws-ipc-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const char* name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A libuv loop for one test. runUntil() turns the loop until `done` holds or the timeout
// passes; the destructor closes every handle left and checks that the loop closes
// cleanly (a handle that was never closed fails the test).
class TestLoop {
 public:
  TestLoop() {
    uv_loop_init(&loop_);
    uv_timer_init(&loop_, &tick_);
    // A steady tick bounds each uv_run(UV_RUN_ONCE) so runUntil can check its deadline.
    uv_timer_start(
        &tick_, [](uv_timer_t*) {}, 5, 5);
  }
  ~TestLoop() {
    uv_close(reinterpret_cast<uv_handle_t*>(&tick_), nullptr);
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle was left open on the loop";
  }
  TestLoop(const TestLoop&) = delete;
  TestLoop& operator=(const TestLoop&) = delete;

  uv_loop_t* get() { return &loop_; }

  bool runUntil(const std::function<bool()>& done,
                std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      uv_run(&loop_, UV_RUN_ONCE);
    }
    return true;
  }
  // Lets pending callbacks (close callbacks included) run.
  void spin(int turns = 3) {
    for (int i = 0; i < turns; ++i) uv_run(&loop_, UV_RUN_NOWAIT);
  }

 private:
  uv_loop_t loop_;
  uv_timer_t tick_;
};

}  // namespace scalws::ipc::testing
