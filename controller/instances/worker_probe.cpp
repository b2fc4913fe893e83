#include "controller/instances/worker_probe.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "ipc/peer_credentials.h"

namespace scalws::controller {

using common::Result;
using common::UniqueFd;

Result<uint64_t> processStartTicks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return common::notFound("no process " + std::to_string(pid));
  std::string line;
  std::getline(in, line);
  // The command (field 2) is in parentheses and may itself hold ") "; fields 3.. follow
  // the last ')'.
  size_t close = line.rfind(')');
  if (close == std::string::npos) return common::internalError("unreadable /proc stat");
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return common::internalError("short /proc stat");
  }
  char* end = nullptr;
  uint64_t ticks = std::strtoull(field.c_str(), &end, 10);
  if (end == field.c_str() || *end != '\0') return common::internalError("bad starttime");
  return ticks;
}

bool runsWorkerOf(pid_t pid, const std::string& instance) {
  return runsProgramWith(pid, "scalwsd", "--instance", instance);
}

bool runsProgramWith(pid_t pid, const std::string& program, const std::string& flag,
                     const std::string& value) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  if (!in) return false;
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  if (argv.empty()) return false;
  std::string base = argv[0].substr(argv[0].rfind('/') + 1);
  if (base != program) return false;
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag) return argv[i + 1] == value;
  }
  return false;
}

Result<UniqueFd> connectAttachSocket(const std::string& hex_name, pid_t pid) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = hex_name.size() / 2;
  if (hex_name.empty() || hex_name.size() % 2 != 0 || len + 1 > sizeof(addr.sun_path)) {
    return common::invalidArgument("bad attach address '" + hex_name + "'");
  }
  for (size_t i = 0; i < len; ++i) {
    char byte[3] = {hex_name[2 * i], hex_name[2 * i + 1], '\0'};
    char* end = nullptr;
    long value = std::strtol(byte, &end, 16);
    if (end != byte + 2) return common::invalidArgument("bad attach address '" + hex_name + "'");
    addr.sun_path[1 + i] = static_cast<char>(value);
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return common::errnoStatus(errno, "socket(AF_UNIX)");
  socklen_t addr_len = static_cast<socklen_t>(sizeof(sa_family_t) + 1 + len);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), addr_len) != 0) {
    return common::errnoStatus(errno, "connect to the attach socket of pid " + std::to_string(pid));
  }
  Result<ipc::PeerCredentials> peer = ipc::peerCredentials(fd.get());
  if (!peer.ok()) return peer.status();
  if (peer->pid != pid) {
    return common::Status(common::StatusCode::kPermissionDenied,
                          "the attach socket of pid " + std::to_string(pid) + " belongs to pid " +
                              std::to_string(peer->pid));
  }
  return fd;
}

// Debian 12's <sys/pidfd.h> declares these without extern "C" (glibc 2.36), so C++ cannot
// link against them; the raw syscalls are the same thing.
Result<UniqueFd> openPidfd(pid_t pid) {
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!fd) return common::errnoStatus(errno, "pidfd_open " + std::to_string(pid));
  return fd;
}

Result<UniqueFd> copyFdOf(int pidfd, int target_fd) {
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, target_fd, 0)));
  if (!fd) return common::errnoStatus(errno, "pidfd_getfd " + std::to_string(target_fd));
  return fd;
}

}  // namespace scalws::controller
