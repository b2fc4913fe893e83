#include "sandbox/process_status.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

namespace scalws::sandbox {
namespace {

using common::Result;
using common::Status;

// The value of "Name:\t..." (without the tab), or an empty view when the field is absent.
std::string_view fieldOf(std::string_view text, std::string_view name) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.size() > name.size() && line.substr(0, name.size()) == name &&
        line[name.size()] == ':') {
      std::string_view value = line.substr(name.size() + 1);
      while (!value.empty() && (value.front() == '\t' || value.front() == ' ')) {
        value.remove_prefix(1);
      }
      return value;
    }
    pos = end + 1;
  }
  return {};
}

template <typename T>
bool parseNumbers(std::string_view value, T* out, int count, int base = 10) {
  const char* p = value.data();
  const char* end = value.data() + value.size();
  for (int i = 0; i < count; ++i) {
    while (p < end && (*p == '\t' || *p == ' ')) ++p;
    auto [next, ec] = std::from_chars(p, end, out[i], base);
    if (ec != std::errc()) return false;
    p = next;
  }
  return true;
}

Status missing(std::string_view name) {
  return common::invalidArgument("process status has no valid \"" + std::string(name) + "\" field");
}

}  // namespace

Result<ProcessStatus> parseProcessStatus(std::string_view text) {
  ProcessStatus s;
  if (!parseNumbers(fieldOf(text, "Uid"), s.uid, 4)) return missing("Uid");
  if (!parseNumbers(fieldOf(text, "Gid"), s.gid, 4)) return missing("Gid");
  if (!parseNumbers(fieldOf(text, "Threads"), &s.threads, 1)) return missing("Threads");
  int nnp = 0;
  if (!parseNumbers(fieldOf(text, "NoNewPrivs"), &nnp, 1)) return missing("NoNewPrivs");
  s.noNewPrivs = nnp != 0;
  if (!parseNumbers(fieldOf(text, "Seccomp"), &s.seccompMode, 1)) return missing("Seccomp");
  if (!parseNumbers(fieldOf(text, "CapEff"), &s.capEffective, 1, 16)) return missing("CapEff");
  if (!parseNumbers(fieldOf(text, "CapPrm"), &s.capPermitted, 1, 16)) return missing("CapPrm");
  return s;
}

Result<ProcessStatus> readProcessStatus(int fd) {
  std::string text;
  char buf[2048];
  off_t offset = 0;
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof(buf), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return common::errnoStatus(errno, "reading process status");
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    offset += n;
  }
  return parseProcessStatus(text);
}

Result<ProcessStatus> readProcessStatusOf(pid_t pid) {
  std::string path = pid == 0 ? "/proc/self/status" : "/proc/" + std::to_string(pid) + "/status";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return common::errnoStatus(errno, "open " + path);
  Result<ProcessStatus> status = readProcessStatus(fd);
  close(fd);
  return status;
}

Status checkProcessStatus(const ProcessStatus& s, const SandboxReport& report) {
  auto mismatch = [](const std::string& what) {
    return common::internalError("sandbox not in force according to the kernel: " + what);
  };
  if (report.noNewPrivs && !s.noNewPrivs) return mismatch("NoNewPrivs is 0");
  if (report.seccomp.enforced && s.seccompMode != 2) {
    return mismatch("Seccomp is " + std::to_string(s.seccompMode) + ", not 2 (filter)");
  }
  for (int i = 0; i < 4; ++i) {
    if (s.uid[i] != report.identity.uid) {
      return mismatch("uid " + std::to_string(s.uid[i]) + " instead of " +
                      std::to_string(report.identity.uid));
    }
    if (s.gid[i] != report.identity.gid) {
      return mismatch("gid " + std::to_string(s.gid[i]) + " instead of " +
                      std::to_string(report.identity.gid));
    }
  }
  if (report.identity.uid != 0 && (s.capEffective != 0 || s.capPermitted != 0)) {
    return mismatch("capabilities left after dropping root");
  }
  return common::okStatus();
}

}  // namespace scalws::sandbox
