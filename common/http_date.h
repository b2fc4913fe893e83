// The Date header, rendered once a second per loop, plus the
// IMF-fixdate formatting and parsing that validators (Last-Modified, If-Modified-Since) need.
#pragma once

#include <ctime>
#include <optional>
#include <string_view>

namespace scalws::common {

// "Sun, 06 Nov 1994 08:49:37 GMT" (RFC 9110 §5.6.7); `out` must hold 29 bytes.
void formatHttpDate(time_t t, char* out);
// Accepts IMF-fixdate (and the obsolete RFC 850 / asctime forms, as RFC 9110 requires).
std::optional<time_t> parseHttpDate(std::string_view text);

class DateCache {
 public:
  // "Date: <IMF-fixdate>\r\n" for the current second; re-rendered when the second changed.
  std::string_view headerLine();
  std::string_view value();  // just the date
  time_t now();

 private:
  void refresh();
  time_t second_ = 0;
  char line_[64] = {};
};

}  // namespace scalws::common
