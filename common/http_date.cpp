#include "common/http_date.h"

#include <time.h>

#include <cstdio>
#include <cstring>

namespace scalws::common {
namespace {

constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr size_t kDateLen = 29;
constexpr std::string_view kPrefix = "Date: ";

int monthIndex(std::string_view m) {
  for (int i = 0; i < 12; ++i) {
    if (m == kMonths[i]) return i;
  }
  return -1;
}

bool parseDigits(std::string_view s, int& out) {
  if (s.empty()) return false;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

std::optional<time_t> build(int year, int month, int day, int h, int m, int s) {
  if (month < 0 || day < 1 || day > 31 || h > 23 || m > 59 || s > 60 || year < 1970) {
    return std::nullopt;
  }
  tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = month;
  t.tm_mday = day;
  t.tm_hour = h;
  t.tm_min = m;
  t.tm_sec = s;
  return timegm(&t);
}

bool parseClock(std::string_view s, int& h, int& m, int& sec) {
  return s.size() == 8 && s[2] == ':' && s[5] == ':' && parseDigits(s.substr(0, 2), h) &&
         parseDigits(s.substr(3, 2), m) && parseDigits(s.substr(6, 2), sec);
}

}  // namespace

void formatHttpDate(time_t t, char* out) {
  tm g;
  gmtime_r(&t, &g);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[g.tm_wday],
                g.tm_mday, kMonths[g.tm_mon], g.tm_year + 1900, g.tm_hour, g.tm_min, g.tm_sec);
  std::memcpy(out, buf, kDateLen);
}

std::optional<time_t> parseHttpDate(std::string_view v) {
  int day = 0, year = 0, h = 0, m = 0, s = 0;
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  if (v.size() == 29 && v[3] == ',' && v[4] == ' ' && v.substr(26) == "GMT") {
    if (!parseDigits(v.substr(5, 2), day) || !parseDigits(v.substr(12, 4), year) ||
        !parseClock(v.substr(17, 8), h, m, s)) {
      return std::nullopt;
    }
    return build(year, monthIndex(v.substr(8, 3)), day, h, m, s);
  }
  // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
  size_t comma = v.find(", ");
  if (comma != std::string_view::npos && v.size() == comma + 24 &&
      v.substr(v.size() - 3) == "GMT") {
    std::string_view r = v.substr(comma + 2);
    if (r[2] != '-' || r[6] != '-' || !parseDigits(r.substr(0, 2), day) ||
        !parseDigits(r.substr(7, 2), year) || !parseClock(r.substr(10, 8), h, m, s)) {
      return std::nullopt;
    }
    year += year < 70 ? 2000 : 1900;
    return build(year, monthIndex(r.substr(3, 3)), day, h, m, s);
  }
  // asctime: "Sun Nov  6 08:49:37 1994"
  if (v.size() == 24 && v[3] == ' ' && v[7] == ' ') {
    std::string_view d = v.substr(8, 2);
    if (d[0] == ' ') d.remove_prefix(1);
    if (!parseDigits(d, day) || !parseClock(v.substr(11, 8), h, m, s) ||
        !parseDigits(v.substr(20, 4), year)) {
      return std::nullopt;
    }
    return build(year, monthIndex(v.substr(4, 3)), day, h, m, s);
  }
  return std::nullopt;
}

time_t DateCache::now() {
  timespec ts;
  // The coarse clock is read from the vDSO: no syscall, good to a few milliseconds.
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return ts.tv_sec;
}

void DateCache::refresh() {
  time_t t = now();
  if (t == second_ && line_[0] != '\0') return;
  second_ = t;
  std::memcpy(line_, kPrefix.data(), kPrefix.size());
  formatHttpDate(t, line_ + kPrefix.size());
  std::memcpy(line_ + kPrefix.size() + kDateLen, "\r\n", 2);
}

std::string_view DateCache::headerLine() {
  refresh();
  return std::string_view(line_, kPrefix.size() + kDateLen + 2);
}

std::string_view DateCache::value() {
  refresh();
  return std::string_view(line_ + kPrefix.size(), kDateLen);
}

}  // namespace scalws::common
