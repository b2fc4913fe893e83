// Fixtures for sandbox tests run against the real kernel: a directory tree with a docroot,
// a cache dir, a log file and files outside every root, and listeners on 127.0.0.1.
//
// Every file is mode 0666 and every directory 0755 or 0777, so plain permissions never
// deny what the tests try: a refusal can only come from the sandbox.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace scalws::sandbox::testing {

class SandboxTree {
 public:
  SandboxTree() {
    char tmpl[] = "/tmp/scalws-sandbox-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    root_ = tmpl;
    chmod(root_.c_str(), 0755);
    makeDir("www", 0755);
    makeDir("www/sub", 0755);
    makeFile("www/index.html", kIndexBody);
    makeFile("www/sub/page.html", "page\n");
    makeDir("cache", 0777);
    makeDir("logs", 0777);
    makeFile("logs/access.log", "first line\n");
    makeFile("secret.txt", "secret\n");
    makeDir("outside", 0777);
    if (symlink("../secret.txt", path("www/link-to-secret").c_str()) != 0) std::abort();
  }
  ~SandboxTree() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  SandboxTree(const SandboxTree&) = delete;
  SandboxTree& operator=(const SandboxTree&) = delete;

  static constexpr const char* kIndexBody = "hello from the docroot\n";

  std::string path(const std::string& rel) const { return root_ + "/" + rel; }
  std::string docroot() const { return path("www"); }
  std::string cacheDir() const { return path("cache"); }
  std::string logFile() const { return path("logs/access.log"); }
  std::string secret() const { return path("secret.txt"); }
  std::string outsideDir() const { return path("outside"); }

 private:
  void makeDir(const std::string& rel, mode_t mode) {
    std::string p = path(rel);
    if (mkdir(p.c_str(), mode) != 0) std::abort();
    chmod(p.c_str(), mode);  // not reduced by the umask
  }
  void makeFile(const std::string& rel, const std::string& body) {
    std::string p = path(rel);
    FILE* f = std::fopen(p.c_str(), "w");
    if (f == nullptr) std::abort();
    std::fputs(body.c_str(), f);
    std::fclose(f);
    chmod(p.c_str(), 0666);
  }

  std::string root_;
};

// A TCP socket listening on 127.0.0.1 on a free port; connects complete in the backlog.
class TcpListener {
 public:
  TcpListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        listen(fd_, 16) != 0 || getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::abort();
    }
    port_ = ntohs(addr.sin_port);
  }
  ~TcpListener() { close(fd_); }
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

// A unix socket listening in the abstract namespace (no file).
class AbstractUnixListener {
 public:
  AbstractUnixListener() {
    name_ = "scalws-sandbox-test-" + std::to_string(getpid());
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = address();
    if (fd_ < 0 || bind(fd_, reinterpret_cast<const sockaddr*>(&addr), length()) != 0 ||
        listen(fd_, 16) != 0) {
      std::abort();
    }
  }
  ~AbstractUnixListener() { close(fd_); }
  AbstractUnixListener(const AbstractUnixListener&) = delete;
  AbstractUnixListener& operator=(const AbstractUnixListener&) = delete;

  sockaddr_un address() const {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    name_.copy(addr.sun_path + 1, sizeof(addr.sun_path) - 2);
    return addr;
  }
  socklen_t length() const {
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name_.size());
  }

 private:
  std::string name_;
  int fd_ = -1;
};

// connect() to 127.0.0.1:port with a fresh socket: 0 or errno.
inline int connectLoopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = rc == 0 ? 0 : errno;
  close(fd);
  return err;
}

// bind() a fresh TCP socket to 127.0.0.1:port (0: any port): 0 or errno.
inline int bindLoopback(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = rc == 0 ? 0 : errno;
  close(fd);
  return err;
}

// open() then close: 0 or errno.
inline int tryOpen(const std::string& path, int flags, mode_t mode = 0644) {
  int fd = open(path.c_str(), flags | O_CLOEXEC, mode);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

// execve() of a program that exists and would succeed: errno (it only returns on failure).
inline int tryExec(const char* program = "/bin/true") {
  char* const argv[] = {const_cast<char*>(program), nullptr};
  char* const envp[] = {nullptr};
  execve(program, argv, envp);
  return errno;
}

// fork(): 0 when a child was created (and reaped), errno otherwise.
inline int tryFork() {
  pid_t pid = fork();
  if (pid < 0) return errno;
  if (pid == 0) _exit(0);
  int status;
  waitpid(pid, &status, 0);
  return 0;
}

}  // namespace scalws::sandbox::testing
