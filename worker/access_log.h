// The per-site access log (nginx's combined format or JSON lines). One buffer
// per loop, written to the shared O_APPEND fd in whole lines when it fills, at least once
// a second, and at exit — never a write per request.
#pragma once

#include <cstdint>
#include <string>

#include "common/config/site_config.h"
#include "common/status.h"
#include "worker/http/handler.h"
#include "worker/http/request.h"

namespace scalws::worker {

// Opens (creating, 0640) a log file for appending; the fd is shared by every loop.
common::Result<int> openAccessLogFile(const std::string& path);

class AccessLog {
 public:
  AccessLog(int fd, common::config::AccessLogFormat format);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  void record(const Request& request, uint16_t status, uint64_t body_bytes, const Handler* handler);
  void flush();

 private:
  void appendCombined(const Request& request, uint16_t status, uint64_t body_bytes);
  void appendJson(const Request& request, uint16_t status, uint64_t body_bytes,
                  const Handler* handler);
  void appendEscaped(std::string_view s, bool json);
  // `before` as it is, then `value` escaped: one field of either format.
  void appendField(std::string_view before, std::string_view value, bool json) {
    buffer_.append(before);
    appendEscaped(value, json);
  }
  void appendNumber(uint64_t n);
  void appendPeer(const Request& request);
  void refreshTime();

  int fd_;
  common::config::AccessLogFormat format_;
  std::string buffer_;
  int64_t time_second_ = -1;
  char time_local_[32] = {};  // "30/Nov/2026:02:45:34 +0000"
  char time_iso_[32] = {};    // "2026-11-30T02:45:34Z"
};

}  // namespace scalws::worker
