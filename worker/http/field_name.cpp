#include "worker/http/field_name.h"

#include <array>
#include <cstring>
#include <span>
#include <type_traits>

#include "worker/http/header_field.h"

namespace scalws::worker {
namespace {

// `count` bytes (at most 8) from `p + offset` as a little-endian word, the way a load on
// x86 reads them; also at compile time, for the table below.
constexpr uint64_t wordAt(const char* p, size_t offset, size_t count) {
  if (!std::is_constant_evaluated() && count == 8) {
    uint64_t w;
    std::memcpy(&w, p + offset, 8);
    return w;
  }
  if (!std::is_constant_evaluated() && count == 4) {
    uint32_t w;
    std::memcpy(&w, p + offset, 4);
    return w;
  }
  uint64_t w = 0;
  for (size_t i = 0; i < count; ++i)
    w |= uint64_t{static_cast<unsigned char>(p[offset + i])} << (8 * i);
  return w;
}

// A name of up to 24 bytes as three words, every byte covered (the last word may overlap
// the others), letters lowered. Two names of one length are equal ignoring case exactly
// when their signatures are.
struct Signature {
  uint64_t first = 0;
  uint64_t second = 0;
  uint64_t last = 0;
  constexpr bool operator==(const Signature&) const = default;
};

constexpr Signature signatureOf(std::string_view name) {
  const char* p = name.data();
  size_t n = name.size();
  Signature s;
  if (n >= 8) {
    s.first = wordAt(p, 0, 8);
    if (n >= 16) s.second = wordAt(p, 8, 8);
    s.last = wordAt(p, n - 8, 8);
  } else if (n >= 4) {
    s.first = wordAt(p, 0, 4) | wordAt(p, n - 4, 4) << 32;
  } else {
    s.first = wordAt(p, 0, n);
  }
  s.first = asciiLowerWord(s.first);
  if (n >= 16) s.second = asciiLowerWord(s.second);
  if (n >= 8) s.last = asciiLowerWord(s.last);
  return s;
}

struct Known {
  FieldName id;
  Signature signature;
};

constexpr Known known(FieldName id, std::string_view lower_name) {
  return Known{id, signatureOf(lower_name)};
}

// Grouped by length, so a name is compared with at most two others.
constexpr std::array kLength2 = {known(FieldName::kTe, "te")};
constexpr std::array kLength3 = {known(FieldName::kVia, "via")};
constexpr std::array kLength4 = {known(FieldName::kDate, "date"), known(FieldName::kHost, "host")};
constexpr std::array kLength6 = {known(FieldName::kExpect, "expect"),
                                 known(FieldName::kServer, "server")};
constexpr std::array kLength7 = {known(FieldName::kTrailer, "trailer"),
                                 known(FieldName::kUpgrade, "upgrade")};
constexpr std::array kLength9 = {known(FieldName::kForwarded, "forwarded")};
constexpr std::array kLength10 = {known(FieldName::kConnection, "connection"),
                                  known(FieldName::kKeepAlive, "keep-alive")};
constexpr std::array kLength14 = {known(FieldName::kContentLength, "content-length")};
constexpr std::array kLength15 = {known(FieldName::kXForwardedFor, "x-forwarded-for")};
constexpr std::array kLength16 = {known(FieldName::kProxyConnection, "proxy-connection"),
                                  known(FieldName::kXForwardedHost, "x-forwarded-host")};
constexpr std::array kLength17 = {known(FieldName::kTransferEncoding, "transfer-encoding"),
                                  known(FieldName::kXForwardedProto, "x-forwarded-proto")};

std::span<const Known> candidatesOfLength(size_t size) {
  switch (size) {
    case 2:
      return kLength2;
    case 3:
      return kLength3;
    case 4:
      return kLength4;
    case 6:
      return kLength6;
    case 7:
      return kLength7;
    case 9:
      return kLength9;
    case 10:
      return kLength10;
    case 14:
      return kLength14;
    case 15:
      return kLength15;
    case 16:
      return kLength16;
    case 17:
      return kLength17;
    default:
      return {};
  }
}

}  // namespace

FieldName classifyFieldName(std::string_view name) {
  std::span<const Known> candidates = candidatesOfLength(name.size());
  if (candidates.empty()) return FieldName::kOther;
  Signature signature = signatureOf(name);
  for (const Known& k : candidates) {
    if (k.signature == signature) return k.id;
  }
  return FieldName::kOther;
}

}  // namespace scalws::worker
