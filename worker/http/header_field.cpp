#include "worker/http/header_field.h"

#include <cstdint>
#include <cstring>

namespace scalws::worker {
namespace {

uint64_t load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}

// 4 to 7 bytes as one word: the first four and the last four (they may overlap).
uint64_t load4to7(const char* p, size_t size) {
  uint32_t head;
  uint32_t tail;
  std::memcpy(&head, p, 4);
  std::memcpy(&tail, p + size - 4, 4);
  return head | (static_cast<uint64_t>(tail) << 32);
}

}  // namespace

// Field names are compared many times per message; a word at a time keeps that a few
// instructions per name instead of a few per byte.
bool sameSizeEqualsIgnoreCase(const char* a, const char* b, size_t size) {
  if (size >= 8) {
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      if (asciiLowerWord(load8(a + i)) != asciiLowerWord(load8(b + i))) return false;
    }
    // The last (overlapping) word covers what is left.
    return i == size || asciiLowerWord(load8(a + size - 8)) == asciiLowerWord(load8(b + size - 8));
  }
  if (size >= 4) return asciiLowerWord(load4to7(a, size)) == asciiLowerWord(load4to7(b, size));
  for (size_t i = 0; i < size; ++i) {
    if (asciiLower(a[i]) != asciiLower(b[i])) return false;
  }
  return true;
}

// Without a branch per byte: names are short and almost always valid, so the whole name is
// checked rather than stopping at the first bad byte.
bool isToken(std::string_view s) {
  if (s.empty()) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  unsigned all = 1;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    all &= detail::kTokenTable[p[i]] & detail::kTokenTable[p[i + 1]] &
           detail::kTokenTable[p[i + 2]] & detail::kTokenTable[p[i + 3]];
  }
  for (; i < n; ++i) all &= detail::kTokenTable[p[i]];
  return all != 0;
}

std::string asciiLowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = asciiLower(c);
  return out;
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
