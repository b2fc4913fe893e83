// ForkedChild: runs a body in a forked child that may sandbox itself, and brings the
// results of its probes back to the test through a pipe.
//
// The child never returns into GoogleTest: it records "name=value" lines with
// ChildProbe::record() (plain write(2), allowed by the seccomp table) and _exit()s. The
// parent asserts on the values; a probe the child never reached (killed, exec'd,
// crashed) is simply absent, which makes the assertion fail.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace scalws::sandbox::testing {

class ChildProbe {
 public:
  ChildProbe(int out, int go) : out_(out), go_(go) {}

  void record(const char* name, long value) {
    char line[256];
    int n = std::snprintf(line, sizeof(line), "%s=%ld\n", name, value);
    writeAll(line, static_cast<size_t>(n));
  }
  // A one-line text value (newlines are replaced by spaces).
  void note(const char* name, std::string text) {
    for (char& c : text) {
      if (c == '\n') c = ' ';
    }
    std::string line = std::string(name) + "=" + text + "\n";
    writeAll(line.data(), line.size());
  }
  // 0 when the call succeeded (rc >= 0), errno otherwise.
  void recordErrno(const char* name, long rc) { record(name, rc < 0 ? errno : 0); }

  // Reports a setup failure and ends the child.
  [[noreturn]] void fail(const std::string& message) {
    std::string line = "error=" + message + "\n";
    writeAll(line.data(), line.size());
    _exit(2);
  }

  // Tells the parent the child is ready to be inspected, then blocks until the parent
  // lets it go (ForkedChild::release()).
  void waitForParent() {
    writeAll("ready=1\n", 8);
    char c;
    while (read(go_, &c, 1) < 0 && errno == EINTR) {
    }
  }

 private:
  void writeAll(const char* data, size_t size) {
    while (size > 0) {
      ssize_t n = write(out_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      data += n;
      size -= static_cast<size_t>(n);
    }
  }

  int out_;
  int go_;
};

class ForkedChild {
 public:
  // Forks and runs body(ChildProbe&) in the child, which then exits 0.
  template <typename Body>
  static ForkedChild start(Body&& body) {
    int out[2];
    int go[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) std::abort();
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) std::abort();
    if (pid == 0) {
      close(out[0]);
      close(go[1]);
      ChildProbe probe(out[1], go[0]);
      body(probe);
      _exit(0);
    }
    close(out[1]);
    close(go[0]);
    return ForkedChild(pid, out[0], go[1]);
  }

  ForkedChild(ForkedChild&& other) noexcept
      : pid_(std::exchange(other.pid_, -1)),
        out_(std::exchange(other.out_, -1)),
        go_(std::exchange(other.go_, -1)),
        buffer_(std::move(other.buffer_)),
        values_(std::move(other.values_)) {}
  ForkedChild& operator=(ForkedChild&&) = delete;
  ~ForkedChild() {
    if (go_ >= 0) close(go_);
    if (out_ >= 0) close(out_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }

  // Reads lines until the child said "ready" (true) or closed its end (false).
  bool waitReady() {
    while (!values_.count("ready")) {
      if (!readMore()) return false;
    }
    return true;
  }

  // Lets a child blocked in waitForParent() go on.
  void release() {
    if (go_ >= 0) close(go_);
    go_ = -1;
  }

  // Releases the child, reads everything it wrote and reaps it; returns its wait status.
  int finish() {
    release();
    while (readMore()) {
    }
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

  const std::map<std::string, std::string>& values() const { return values_; }
  // The recorded number, or nullopt when the child never recorded `name`.
  std::optional<long> value(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return std::strtol(it->second.c_str(), nullptr, 10);
  }
  std::string text(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? std::string() : it->second;
  }
  std::string error() const {
    auto it = values_.find("error");
    return it == values_.end() ? std::string() : it->second;
  }

 private:
  ForkedChild(pid_t pid, int out, int go) : pid_(pid), out_(out), go_(go) {}

  bool readMore() {
    char buf[4096];
    ssize_t n;
    while ((n = read(out_, buf, sizeof(buf))) < 0 && errno == EINTR) {
    }
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<size_t>(n));
    size_t nl;
    while ((nl = buffer_.find('\n')) != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      size_t eq = line.find('=');
      if (eq != std::string::npos) values_[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return true;
  }

  pid_t pid_;
  int out_;
  int go_;
  std::string buffer_;
  std::map<std::string, std::string> values_;
};

// "EACCES (13)" for assertion messages.
inline std::string errnoText(std::optional<long> value) {
  if (!value) return "<not recorded>";
  if (*value == 0) return "success (0)";
  const char* name = strerrorname_np(static_cast<int>(*value));
  return std::string(name ? name : "?") + " (" + std::to_string(*value) + ")";
}

}  // namespace scalws::sandbox::testing

// Expects that the child recorded `name` with errno value `expected` (0 = success).
#define EXPECT_CHILD_ERRNO(child, name, expected)                                       \
  EXPECT_EQ((child).value(name), std::optional<long>(expected))                         \
      << name << ": got " << ::scalws::sandbox::testing::errnoText((child).value(name)) \
      << ", expected " << ::scalws::sandbox::testing::errnoText(std::optional<long>(expected))
