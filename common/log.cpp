#include "common/log.h"

#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace scalws::common::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::atomic<int> g_fd{2};
char g_program[32] = "scalws";

}  // namespace

Result<Level> parseLevel(std::string_view name) {
  if (name == "debug") return Level::kDebug;
  if (name == "info") return Level::kInfo;
  if (name == "notice") return Level::kNotice;
  if (name == "warn" || name == "warning") return Level::kWarn;
  if (name == "error") return Level::kError;
  if (name == "alert") return Level::kAlert;
  return invalidArgument("unknown log level \"" + std::string(name) +
                         "\" (expected debug, info, notice, warn, error or alert)");
}

std::string_view levelName(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kNotice:
      return "notice";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
    case Level::kAlert:
      return "alert";
  }
  return "?";
}

void setLevel(Level l) {
  g_level.store(static_cast<int>(l), std::memory_order_relaxed);
}
Level level() {
  return static_cast<Level>(g_level.load(std::memory_order_relaxed));
}
void setFd(int fd) {
  g_fd.store(fd, std::memory_order_relaxed);
}
int fd() {
  return g_fd.load(std::memory_order_relaxed);
}

void setProgramName(std::string_view name) {
  size_t n = std::min(name.size(), sizeof(g_program) - 1);
  std::memcpy(g_program, name.data(), n);
  g_program[n] = '\0';
}

void vwrite(Level l, const char* fmt, va_list args) {
  char line[4096];
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm t;
  gmtime_r(&tv.tv_sec, &t);
  int n = std::snprintf(
      line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ [%s] %s[%d]: ", t.tm_year + 1900,
      t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, static_cast<long>(tv.tv_usec / 1000),
      levelName(l).data(), g_program, static_cast<int>(getpid()));
  if (n < 0) return;
  size_t used = static_cast<size_t>(n);
  int m = std::vsnprintf(line + used, sizeof(line) - used - 1, fmt, args);
  if (m < 0) return;
  used += std::min(static_cast<size_t>(m), sizeof(line) - used - 2);
  line[used++] = '\n';
  // One write per line; a short write to a pipe or file is not retried on purpose, the
  // log must never block the loop for long.
  ssize_t ignored = ::write(fd(), line, used);
  (void)ignored;
}

void write(Level l, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vwrite(l, fmt, args);
  va_end(args);
}

}  // namespace scalws::common::log
