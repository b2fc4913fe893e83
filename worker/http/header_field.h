// A header as views, and the ASCII helpers every codec needs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace scalws::worker {

struct HeaderField {
  std::string_view name;
  std::string_view value;
};

inline char asciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

// Eight bytes at once, with 'A'..'Z' lowered and every other byte (non-ASCII too) as it
// was. Each byte's sums stay below 0x100, so no carry crosses into its neighbour.
constexpr uint64_t asciiLowerWord(uint64_t x) {
  constexpr uint64_t kEveryByte = 0x0101010101010101ULL;
  constexpr uint64_t kHighBits = 0x8080808080808080ULL;
  uint64_t low7 = x & ~kHighBits;
  uint64_t at_least_a = low7 + (0x80 - 'A') * kEveryByte;
  uint64_t past_z = low7 + (0x80 - 'Z' - 1) * kEveryByte;
  uint64_t upper = at_least_a & ~past_z & ~x & kHighBits;
  return x | (upper >> 2);  // 0x80 >> 2 is the 0x20 that lowers a letter
}

// `s` with ASCII letters lower-cased (names and hosts compare that way; nothing else changes).
std::string asciiLowerCopy(std::string_view s);
// Two strings of one size, compared with ASCII letters folded.
bool sameSizeEqualsIgnoreCase(const char* a, const char* b, size_t size);
// Inline: most calls compare a field name with a name of another length, and end here.
inline bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && sameSizeEqualsIgnoreCase(a.data(), b.data(), a.size());
}
// True when `list` (a comma-separated header value) holds `token`, case-insensitively.
bool headerListContains(std::string_view list, std::string_view token);
namespace detail {
constexpr std::array<uint8_t, 256> makeTokenTable() {
  std::array<uint8_t, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = 1;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = 1;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = 1;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = 1;
  return t;
}
inline constexpr std::array<uint8_t, 256> kTokenTable = makeTokenTable();
}  // namespace detail

// RFC 9110 §5.6.2 token characters. Inline: parsers test it byte by byte.
inline bool isTokenChar(unsigned char c) {
  return detail::kTokenTable[c] != 0;
}
bool isToken(std::string_view s);
// Inline: every field value of every message passes through it.
inline std::string_view trimOws(std::string_view s) {
  size_t begin = 0;
  size_t end = s.size();
  while (begin < end && (s[begin] == ' ' || s[begin] == '\t')) ++begin;
  while (end > begin && (s[end - 1] == ' ' || s[end - 1] == '\t')) --end;
  return std::string_view(s.data() + begin, end - begin);
}

}  // namespace scalws::worker
