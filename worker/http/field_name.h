// The field names a proxy or a codec treats specially, recognised once per field: the
// filters then test a bit instead of comparing a name with every name on their lists.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace scalws::worker {

enum class FieldName : uint8_t {
  kOther,  // every name not listed below
  kConnection,
  kContentLength,
  kDate,
  kExpect,
  kForwarded,
  kHost,
  kKeepAlive,
  kProxyConnection,
  kServer,
  kTe,
  kTrailer,
  kTransferEncoding,
  kUpgrade,
  kVia,
  kXForwardedFor,
  kXForwardedHost,
  kXForwardedProto,
};

// Case-insensitive, as field names compare (RFC 9110 §5.1).
FieldName classifyFieldName(std::string_view name);

// A set of FieldName values, for lists such as "the hop-by-hop fields".
class FieldNameSet {
 public:
  constexpr FieldNameSet(std::initializer_list<FieldName> names) {
    for (FieldName n : names) bits_ |= bit(n);
  }
  constexpr bool contains(FieldName n) const { return (bits_ & bit(n)) != 0; }

 private:
  static constexpr uint32_t bit(FieldName n) { return uint32_t{1} << static_cast<unsigned>(n); }
  uint32_t bits_ = 0;
};

}  // namespace scalws::worker
