// The error log: levelled lines to stderr or a file, safe from any thread.
//
// Each line is written with one write(2) so lines from several threads or processes that
// share the fd never interleave. Formatting happens only when the level is enabled.
#pragma once

#include <cstdarg>
#include <string_view>

#include "common/status.h"

namespace scalws::common::log {

enum class Level { kDebug = 0, kInfo, kNotice, kWarn, kError, kAlert };

Result<Level> parseLevel(std::string_view name);
std::string_view levelName(Level level);

// Process-wide settings; set at start-up (and on reload), read on every log call.
void setLevel(Level level);
Level level();
void setProgramName(std::string_view name);  // copied; "scalwsd", "scalws-controller"
// Takes an fd opened O_APPEND (the log file) or 2; the previous fd is not closed.
void setFd(int fd);
int fd();

inline bool enabled(Level l) {
  return static_cast<int>(l) >= static_cast<int>(level());
}

void write(Level level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void vwrite(Level level, const char* fmt, va_list args);

}  // namespace scalws::common::log

#define SCALWS_LOG(lvl, ...)                                                        \
  do {                                                                              \
    if (::scalws::common::log::enabled(::scalws::common::log::Level::lvl))          \
      ::scalws::common::log::write(::scalws::common::log::Level::lvl, __VA_ARGS__); \
  } while (0)
#define LOG_DEBUG(...) SCALWS_LOG(kDebug, __VA_ARGS__)
#define LOG_INFO(...) SCALWS_LOG(kInfo, __VA_ARGS__)
#define LOG_NOTICE(...) SCALWS_LOG(kNotice, __VA_ARGS__)
#define LOG_WARN(...) SCALWS_LOG(kWarn, __VA_ARGS__)
#define LOG_ERROR(...) SCALWS_LOG(kError, __VA_ARGS__)
#define LOG_ALERT(...) SCALWS_LOG(kAlert, __VA_ARGS__)
