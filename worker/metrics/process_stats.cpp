#include "worker/metrics/process_stats.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>

namespace scalws::worker {

ProcessStats::ProcessStats() {
  statm_fd_ = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
}

ProcessStats::~ProcessStats() {
  if (statm_fd_ >= 0) ::close(statm_fd_);
}

uint64_t ProcessStats::cpuMicros() const {
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  auto us = [](const timeval& tv) {
    return static_cast<uint64_t>(tv.tv_sec) * 1'000'000 + static_cast<uint64_t>(tv.tv_usec);
  };
  return us(ru.ru_utime) + us(ru.ru_stime);
}

uint64_t ProcessStats::rssBytes() const {
  if (statm_fd_ < 0) return 0;
  char buf[128];
  ssize_t n = ::pread(statm_fd_, buf, sizeof(buf) - 1, 0);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // "size resident shared ..." in pages.
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  uint64_t resident = std::strtoull(end, nullptr, 10);
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace scalws::worker
