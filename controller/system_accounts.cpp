#include "controller/system_accounts.h"

#include <fcntl.h>
#include <grp.h>
#include <openssl/sha.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/hex.h"
#include "controller/child_process.h"

namespace scalws::controller {

using common::Result;
using common::Status;

namespace {

constexpr size_t kMaxUserName = 32;  // useradd's limit
constexpr std::string_view kPrefix = "scalws-";

}  // namespace

Result<Account> lookUpUser(const std::string& name) {
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (name.empty() || getpwnam_r(name.c_str(), &pw, buf, sizeof(buf), &found) != 0 ||
      found == nullptr) {
    return common::notFound("no user '" + name + "' on this host");
  }
  Account a;
  a.name = name;
  a.uid = pw.pw_uid;
  a.gid = pw.pw_gid;
  struct group gr;
  struct group* gfound = nullptr;
  char gbuf[4096];
  if (getgrgid_r(pw.pw_gid, &gr, gbuf, sizeof(gbuf), &gfound) != 0 || gfound == nullptr) {
    return common::notFound("user '" + name + "' has no named primary group");
  }
  a.group = gr.gr_name;
  return a;
}

Result<gid_t> lookUpGroup(const std::string& name) {
  struct group gr;
  struct group* found = nullptr;
  char buf[4096];
  if (name.empty() || getgrnam_r(name.c_str(), &gr, buf, sizeof(buf), &found) != 0 ||
      found == nullptr) {
    return common::notFound("no group '" + name + "' on this host");
  }
  return gr.gr_gid;
}

std::string instanceUserName(const std::string& instance) {
  std::string name = std::string(kPrefix) + instance;
  if (name.size() <= kMaxUserName) return name;
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(instance.data()), instance.size(), digest);
  std::string hex =
      common::toHex(std::string_view(reinterpret_cast<const char*>(digest), 4));  // 8 digits
  return std::string(kPrefix) + instance.substr(0, 16) + "-" + hex;
}

Status runCommand(const std::vector<std::string>& argv) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return common::errnoStatus(errno, "pipe2");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char* no_env[] = {nullptr};
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(out[0]);
    ::close(out[1]);
    return common::errnoStatus(err, "fork");
  }
  if (pid == 0) {
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    ::execve(argv[0].c_str(), args.data(), no_env);
    _exit(127);
  }
  ::close(out[1]);
  std::string said;
  char buf[512];
  ssize_t n;
  while ((n = ::read(out[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0 && said.size() < 4096) said.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status();
  std::string first = said.substr(0, said.find('\n'));
  return Status(common::StatusCode::kFailedPrecondition,
                argv[0] + " " + describeWait(status) + (first.empty() ? "" : ": " + first));
}

Result<Account> SystemAccounts::create(const std::string& name, const std::string& comment) {
  SCALWS_RETURN_IF_ERROR(
      runCommand({"/usr/sbin/useradd", "--system", "--user-group", "--no-create-home", "--home-dir",
                  "/nonexistent", "--shell", "/usr/sbin/nologin", "--comment", comment, name}));
  return lookUpUser(name);
}

Status SystemAccounts::remove(const std::string& name) {
  if (!lookUpUser(name).ok()) return common::notFound("no user '" + name + "' on this host");
  return runCommand({"/usr/sbin/userdel", name});
}

}  // namespace scalws::controller
