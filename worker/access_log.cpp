#include "worker/access_log.h"

#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/log.h"
#include "worker/http/address_text.h"
#include "worker/http/decimal.h"

namespace scalws::worker {
namespace {

constexpr size_t kFlushAt = 32 * 1024;

}  // namespace

common::Result<int> openAccessLogFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) return common::errnoStatus(errno, "cannot open access log " + path);
  return fd;
}

AccessLog::AccessLog(int fd, common::config::AccessLogFormat format) : fd_(fd), format_(format) {
  buffer_.reserve(kFlushAt + 4096);
}

AccessLog::~AccessLog() {
  flush();
}

void AccessLog::refreshTime() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  if (ts.tv_sec == time_second_) return;
  time_second_ = ts.tv_sec;
  tm t;
  gmtime_r(&ts.tv_sec, &t);
  strftime(time_local_, sizeof(time_local_), "%d/%b/%Y:%H:%M:%S +0000", &t);
  strftime(time_iso_, sizeof(time_iso_), "%Y-%m-%dT%H:%M:%SZ", &t);
}

void AccessLog::appendEscaped(std::string_view s, bool json) {
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c < 0x20 || c >= 0x7f) {
      char esc[8];
      int n = json ? std::snprintf(esc, sizeof(esc), "\\u%04x", c)
                   : std::snprintf(esc, sizeof(esc), "\\x%02X", c);
      buffer_.append(esc, static_cast<size_t>(n));
    } else {
      buffer_.push_back(ch);
    }
  }
}

void AccessLog::appendPeer(const Request& r) {
  char text[kAddressTextSize];
  std::string_view peer = r.peer != nullptr ? addressText(r.peer->address, text, MappedV4::kAsIpv6)
                                            : std::string_view();
  buffer_.append(peer.empty() ? std::string_view("-") : peer);
}

void AccessLog::appendNumber(uint64_t n) {
  char num[24];
  buffer_.append(num, formatDecimal(n, num));
}

void AccessLog::appendCombined(const Request& r, uint16_t status, uint64_t bytes) {
  appendPeer(r);
  // The user a route's auth let in (nginx's $remote_user).
  appendField(" - ", r.remote_user.empty() ? "-" : r.remote_user, false);
  buffer_.append(" [");
  buffer_.append(time_local_);
  buffer_.append("] \"");
  if (r.method_name.empty()) {
    buffer_.push_back('-');
  } else {
    appendEscaped(r.method_name, false);
    buffer_.push_back(' ');
    appendEscaped(r.target, false);
    buffer_.push_back(' ');
    buffer_.append(httpVersionName(r.version));
  }
  buffer_.append("\" ");
  appendNumber(status);
  buffer_.push_back(' ');
  appendNumber(bytes);
  std::string_view referer = r.header("referer");
  appendField(" \"", referer.empty() ? "-" : referer, false);
  std::string_view agent = r.header("user-agent");
  appendField("\" \"", agent.empty() ? "-" : agent, false);
  buffer_.push_back('"');
  if (!r.upstream_address.empty()) {
    // After the combined fields, so tools that read those still do (nginx's
    // $upstream_addr and $upstream_response_time, in seconds with milliseconds).
    appendField(" upstream=", r.upstream_address, false);
    char seconds[32];
    int n = std::snprintf(seconds, sizeof(seconds), " upstream_time=%llu.%03llu",
                          static_cast<unsigned long long>(r.upstream_us / 1'000'000),
                          static_cast<unsigned long long>(r.upstream_us / 1000 % 1000));
    buffer_.append(seconds, static_cast<size_t>(n));
  }
  buffer_.push_back('\n');
}

void AccessLog::appendJson(const Request& r, uint16_t status, uint64_t bytes,
                           const Handler* handler) {
  buffer_.append("{\"time\":\"");
  buffer_.append(time_iso_);
  buffer_.append("\",\"remote\":\"");
  appendPeer(r);
  appendField("\",\"host\":\"", r.host, true);
  appendField("\",\"method\":\"", r.method_name, true);
  appendField("\",\"uri\":\"", r.target, true);
  buffer_.append("\",\"protocol\":\"");
  buffer_.append(httpVersionName(r.version));
  buffer_.append("\",\"status\":");
  appendNumber(status);
  buffer_.append(",\"bytes\":");
  appendNumber(bytes);
  buffer_.append(",\"duration_us\":");
  uint64_t now = uv_hrtime();
  appendNumber(r.start_ns != 0 && now > r.start_ns ? (now - r.start_ns) / 1000 : 0);
  buffer_.append(",\"action\":\"");
  buffer_.append(handler != nullptr ? handler->actionName() : std::string_view("error"));
  buffer_.append("\",\"request_id\":");
  appendNumber(r.id);
  appendField(",\"referer\":\"", r.header("referer"), true);
  appendField("\",\"user_agent\":\"", r.header("user-agent"), true);
  buffer_.push_back('"');
  if (!r.remote_user.empty()) {
    appendField(",\"remote_user\":\"", r.remote_user, true);
    buffer_.push_back('"');
  }
  if (!r.upstream_address.empty()) {
    appendField(",\"upstream\":\"", r.upstream_address, true);
    buffer_.append("\",\"upstream_time_us\":");
    appendNumber(r.upstream_us);
  }
  buffer_.append("}\n");
}

void AccessLog::record(const Request& r, uint16_t status, uint64_t bytes, const Handler* handler) {
  refreshTime();
  if (format_ == common::config::AccessLogFormat::kJson) {
    appendJson(r, status, bytes, handler);
  } else {
    appendCombined(r, status, bytes);
  }
  if (buffer_.size() >= kFlushAt) flush();
}

void AccessLog::flush() {
  size_t done = 0;
  while (done < buffer_.size()) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      LOG_ERROR("access log write failed: %s", n < 0 ? strerror(errno) : "short write");
      break;
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

}  // namespace scalws::worker
