#include "controller/pools/pool_fpm_config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace scalws::controller {

using common::Result;
using common::Status;

namespace {

// Inside "..." php's INI scanner expands ${...} and treats backslash and quote specially.
Result<std::string> quoted(std::string_view key, const std::string& value) {
  if (value.empty()) return common::invalidArgument("php-fpm config: empty " + std::string(key));
  for (unsigned char c : value) {
    if (c == '"' || c == '\\' || c == '$' || c < 0x20 || c == 0x7f) {
      return common::invalidArgument("php-fpm config: " + std::string(key) + " \"" + value +
                                     "\" holds a character php-fpm's INI cannot quote");
    }
  }
  return "\"" + value + "\"";
}

}  // namespace

Result<std::string> renderFpmConfig(const FpmConfig& c) {
  if (c.pool == "global") {
    return common::invalidArgument("php-fpm config: a pool cannot be named \"global\"");
  }
  if (c.processes == 0) return common::invalidArgument("php-fpm config: 0 processes");
  std::string out;
  auto line = [&](std::string_view key, const std::string& value) -> Status {
    Result<std::string> q = quoted(key, value);
    if (!q.ok()) return q.status();
    out += std::string(key) + " = " + *q + "\n";
    return Status();
  };
  out += "; Written by scalws-controller for the managed PHP pool " + c.pool +
         ".\n; Rewritten before every start: change the pool with scalwsctl, not here.\n";
  out += "[global]\n";
  SCALWS_RETURN_IF_ERROR(line("pid", c.pid_path));
  SCALWS_RETURN_IF_ERROR(line("error_log", c.log_path));
  out += "daemonize = no\n";
  // A graceful stop (SIGQUIT) lets requests in flight finish this long.
  out += "process_control_timeout = 10s\n";
  out += "\n";
  Result<std::string> section = quoted("pool", c.pool);
  if (!section.ok()) return section.status();
  out += "[" + c.pool + "]\n";
  SCALWS_RETURN_IF_ERROR(line("user", c.user));
  SCALWS_RETURN_IF_ERROR(line("group", c.group));
  SCALWS_RETURN_IF_ERROR(line("listen", c.socket_path));
  SCALWS_RETURN_IF_ERROR(line("listen.owner", c.user));
  SCALWS_RETURN_IF_ERROR(line("listen.group", c.socket_group));
  out += "listen.mode = 0660\n";
  out += "listen.backlog = 511\n";
  out += "pm = static\n";
  out += "pm.max_children = " + std::to_string(c.processes) + "\n";
  // PHP's fatal errors and warnings written to stderr end up in the pool's log.
  out += "catch_workers_output = yes\n";
  out += "decorate_workers_output = no\n";
  out += "clear_env = yes\n";
  out += "security.limit_extensions = .php\n";
  return out;
}

Status writeFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) return common::errnoStatus(errno, "cannot write " + tmp);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return common::errnoStatus(err, "cannot write " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return common::errnoStatus(err, "cannot write " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return common::errnoStatus(err, "cannot rename " + tmp + " to " + path);
  }
  return Status();
}

}  // namespace scalws::controller
