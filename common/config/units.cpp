#include "common/config/units.h"

#include <charconv>
#include <string>

#include "common/quoted.h"

namespace scalws::common::config {
namespace {

// Splits "123abc" into digits and suffix; false when there are no leading digits or the
// digits overflow.
struct Number {
  uint64_t value = 0;
  std::string_view suffix;
  bool overflow = false;
};

bool splitNumber(std::string_view text, Number& out) {
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (out.value > (UINT64_MAX - digit) / 10) out.overflow = true;
    out.value = out.value * 10 + digit;
    ++i;
  }
  out.suffix = text.substr(i);
  return i > 0;
}

bool multiply(uint64_t a, uint64_t b, uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

bool hasUpperCase(std::string_view text) {
  for (char c : text) {
    if (c >= 'A' && c <= 'Z') return true;
  }
  return false;
}

}  // namespace

Result<uint64_t> parseSize(std::string_view text) {
  const std::string expected =
      " (expected a byte count, optionally with a k, m or g suffix, e.g. \"64k\" or \"10m\")";
  Number n;
  if (!splitNumber(text, n)) return invalidArgument("invalid size " + quoted(text) + expected);
  uint64_t unit = 1;
  if (n.suffix.empty()) {
    unit = 1;
  } else if (n.suffix == "k" || n.suffix == "K") {
    unit = uint64_t{1} << 10;
  } else if (n.suffix == "m" || n.suffix == "M") {
    unit = uint64_t{1} << 20;
  } else if (n.suffix == "g" || n.suffix == "G") {
    unit = uint64_t{1} << 30;
  } else {
    return invalidArgument("invalid size " + quoted(text) + expected);
  }
  uint64_t bytes = 0;
  if (n.overflow || !multiply(n.value, unit, bytes)) {
    return invalidArgument("size " + quoted(text) + " is too large");
  }
  return bytes;
}

Result<uint64_t> parseDurationMs(std::string_view text) {
  const std::string expected =
      " (expected a number with a ms, s, m, h or d suffix, e.g. \"30s\" or \"500ms\"; a "
      "plain number is seconds)";
  Number n;
  if (!splitNumber(text, n)) return invalidArgument("invalid duration " + quoted(text) + expected);
  uint64_t unit = 1000;
  if (n.suffix.empty() || n.suffix == "s") {
    unit = 1000;
  } else if (n.suffix == "ms") {
    unit = 1;
  } else if (n.suffix == "m") {
    unit = 60 * 1000;
  } else if (n.suffix == "h") {
    unit = 60 * 60 * 1000;
  } else if (n.suffix == "d") {
    unit = 24 * 60 * 60 * 1000;
  } else if (hasUpperCase(n.suffix)) {
    return invalidArgument("invalid duration " + quoted(text) +
                           " (duration suffixes are lower-case: ms, s, m, h or d)");
  } else {
    return invalidArgument("invalid duration " + quoted(text) + expected);
  }
  uint64_t ms = 0;
  if (n.overflow || !multiply(n.value, unit, ms)) {
    return invalidArgument("duration " + quoted(text) + " is too large");
  }
  return ms;
}

std::optional<uint64_t> parseCount(std::string_view text, uint64_t max) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value == 0 ||
      value > max) {
    return std::nullopt;
  }
  return value;
}

}  // namespace scalws::common::config
