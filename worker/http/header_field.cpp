#include "worker/http/header_field.h"

#include <array>

namespace scalws::worker {
namespace {

constexpr std::array<bool, 256> makeTokenTable() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kTokenTable = makeTokenTable();

}  // namespace

bool sameSizeEqualsIgnoreCase(const char* a, const char* b, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (asciiLower(a[i]) != asciiLower(b[i])) return false;
  }
  return true;
}

bool isTokenChar(unsigned char c) {
  return kTokenTable[c];
}

bool isToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!kTokenTable[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

std::string asciiLowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = asciiLower(c);
  return out;
}

std::string_view trimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool headerListContains(std::string_view list, std::string_view token) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = trimOws(list.substr(0, comma));
    if (equalsIgnoreCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace scalws::worker
