// scalws-sandbox-probe (test-only): enters exactly the sandbox a standalone worker of the
// given site would, then tries what the test asks and prints one line per attempt:
// "<what> <errno>" (0 = it worked). Used by tests/integration/test_sandbox_*.py.
//
//   scalws-sandbox-probe --config FILE [--read PATH] [--write PATH] [--truncate PATH]
//                        [--exec PATH] [--connect PORT] [--bind PORT] [--fork]
//                        [--connect-tcp PORT] [--connect-mptcp PORT] [--fastopen PORT]
//                        [--fcntl getfl|setfl|setown|setown_ex|setsig|setfl_async]
//
// --connect opens socket(AF_INET, SOCK_STREAM, 0), --connect-tcp asks for IPPROTO_TCP by
// name, --connect-mptcp for IPPROTO_MPTCP; --fastopen connects with sendto(MSG_FASTOPEN)
// instead of connect(). --fcntl runs that command on a fresh socket.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "worker/server/site_runtime.h"
#include "worker/server/worker_sandbox.h"

namespace {

int tryOpen(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

int tcpSocket(int protocol = 0) {
  return ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, protocol);
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

int tryConnect(uint16_t port, int protocol = 0) {
  int fd = tcpSocket(protocol);
  if (fd < 0) return errno;
  sockaddr_in a = loopback(port);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

// A TCP Fast Open send connects inside sendto(), without calling connect().
int tryFastOpen(uint16_t port) {
  int fd = tcpSocket();
  if (fd < 0) return errno;
  sockaddr_in a = loopback(port);
  ssize_t rc =
      ::sendto(fd, "x", 1, MSG_FASTOPEN | MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  int err = rc >= 0 ? 0 : errno;
  ::close(fd);
  return err;
}

int tryFcntl(const std::string& what) {
  int fd = tcpSocket();
  if (fd < 0) return errno;
  int rc = -1;
  errno = EINVAL;
  if (what == "getfl") rc = ::fcntl(fd, F_GETFL);
  if (what == "setfl") rc = ::fcntl(fd, F_SETFL, O_NONBLOCK);
  if (what == "setfl_async") rc = ::fcntl(fd, F_SETFL, O_NONBLOCK | O_ASYNC);
  if (what == "setown") rc = ::fcntl(fd, F_SETOWN, getppid());
  if (what == "setsig") rc = ::fcntl(fd, F_SETSIG, SIGUSR1);
  if (what == "setown_ex") {
    f_owner_ex owner{F_OWNER_PID, getppid()};
    rc = ::fcntl(fd, F_SETOWN_EX, &owner);
  }
  int err = rc >= 0 ? 0 : errno;
  ::close(fd);
  return err;
}

int tryBind(uint16_t port) {
  int fd = tcpSocket();
  if (fd < 0) return errno;
  sockaddr_in a = loopback(port);
  int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

int tryExec(const std::string& path) {
  char* argv[] = {const_cast<char*>(path.c_str()), nullptr};
  execv(path.c_str(), argv);
  return errno;  // only reached when refused
}

int tryFork() {
  pid_t pid = fork();
  if (pid < 0) return errno;
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config;
  std::vector<std::pair<std::string, std::string>> attempts;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--fork") {
      attempts.emplace_back("fork", "");
    } else if (i + 1 < argc && arg == "--config") {
      config = argv[++i];
    } else if (i + 1 < argc && arg.starts_with("--")) {
      attempts.emplace_back(std::string(arg.substr(2)), argv[++i]);
    } else {
      std::fprintf(stderr, "sandbox-probe: bad argument %s\n", argv[i]);
      return 2;
    }
  }
  auto runtime = scalws::worker::prepareSite(config, nullptr);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().message().c_str());
    return 1;
  }
  auto report = scalws::worker::enterSandbox(*runtime->snapshot, config);
  if (!report.ok()) {
    std::fprintf(stderr, "sandbox: %s\n", report.status().message().c_str());
    return 1;
  }
  std::printf("uid %u\n", static_cast<unsigned>(getuid()));
  for (const auto& [what, arg] : attempts) {
    int err = 0;
    if (what == "read") err = tryOpen(arg, O_RDONLY);
    if (what == "write") err = tryOpen(arg, O_WRONLY | O_CREAT);
    if (what == "truncate") err = tryOpen(arg, O_WRONLY | O_TRUNC);
    if (what == "connect") err = tryConnect(static_cast<uint16_t>(std::atoi(arg.c_str())));
    if (what == "connect-tcp") {
      err = tryConnect(static_cast<uint16_t>(std::atoi(arg.c_str())), IPPROTO_TCP);
    }
    if (what == "connect-mptcp") {
      err = tryConnect(static_cast<uint16_t>(std::atoi(arg.c_str())), IPPROTO_MPTCP);
    }
    if (what == "fastopen") err = tryFastOpen(static_cast<uint16_t>(std::atoi(arg.c_str())));
    if (what == "fcntl") err = tryFcntl(arg);
    if (what == "bind") err = tryBind(static_cast<uint16_t>(std::atoi(arg.c_str())));
    if (what == "fork") err = tryFork();
    if (what == "exec") err = tryExec(arg);
    std::printf("%s %d\n", what.c_str(), err);
    std::fflush(stdout);
  }
  return 0;
}
