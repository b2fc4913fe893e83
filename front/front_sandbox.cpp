#include "front/front_sandbox.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/sandbox.h"

namespace scalws::front {

common::Result<sandbox::SandboxPolicy> frontSandboxPolicy(const std::string& user) {
  sandbox::SandboxInputs inputs;
  inputs.user = user;
  inputs.mode = sandbox::SandboxMode::kOn;
  inputs.seccompProfile = sandbox::SeccompProfile::kFront;
  return sandbox::buildSandboxPolicy(inputs);
}

common::Result<sandbox::SandboxReport> enterFrontSandbox(const std::string& user) {
  common::Result<sandbox::SandboxPolicy> policy = frontSandboxPolicy(user);
  if (!policy.ok()) return policy.status();
  // Every descriptor sent to a worker and not yet received counts against this limit
  // (the kernel's unix_inflight check), and after the sandbox it can no longer be raised.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  // Another process of the front's user may not read its memory or attach to it.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    return common::errnoStatus(errno, "prctl(PR_SET_DUMPABLE)");
  }
  return sandbox::applySandbox(*policy);
}

namespace {

std::string outcome(const char* what, int rc, int error) {
  if (rc >= 0) return std::string(what) + ": ALLOWED";
  return std::string(what) + ": refused (" + std::strerror(error) + ")";
}

}  // namespace

std::vector<std::string> probeFrontSandbox() {
  std::vector<std::string> lines;
  int fd = ::open("/etc/passwd", O_RDONLY | O_CLOEXEC);
  lines.push_back(outcome("open /etc/passwd", fd, errno));
  if (fd >= 0) ::close(fd);
  fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  lines.push_back(outcome("open /", fd, errno));
  if (fd >= 0) ::close(fd);
  fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  lines.push_back(outcome("socket(AF_INET)", fd, errno));
  if (fd >= 0) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(1);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    lines.push_back(outcome("connect 127.0.0.1:1", rc, errno));
    ::close(fd);
  }
  fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  lines.push_back(outcome("socket(AF_UNIX)", fd, errno));
  if (fd >= 0) ::close(fd);
  return lines;
}

}  // namespace scalws::front
