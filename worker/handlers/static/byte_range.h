// The Range header of a GET on a static file (RFC 9110 §14.1-14.2), resolved against the
// file's size.
//
// Policy (decided once, nginx-like):
// - A unit other than "bytes", or any syntax error (including last < first), makes the
//   whole header ignored: 200 with the whole file.
// - More than kMaxRanges ranges: ignored (200 whole), as is a set whose lengths add up to
//   more than the file (overlapping ranges would multiply the bytes sent).
// - Ranges that start at or past the end are dropped; none left → 416 with
//   "Content-Range: bytes */size". A last byte past the end is clamped; a suffix longer
//   than the file is the whole file.
// - The remaining ranges are served in the order asked, each as sent (no coalescing):
//   one → 206 with Content-Range, several → 206 multipart/byteranges.
// An empty file ignores Range (no byte range of it can be expressed).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scalws::worker {

struct ByteRange {
  uint64_t first = 0;
  uint64_t length = 0;  // > 0
  uint64_t last() const { return first + length - 1; }
};

struct RangeRequest {
  static constexpr size_t kMaxRanges = 16;
  enum class Kind { kWhole, kUnsatisfiable, kRanges };

  Kind kind = Kind::kWhole;
  std::array<ByteRange, kMaxRanges> ranges{};
  size_t count = 0;
};

RangeRequest parseRange(std::string_view header, uint64_t size);

}  // namespace scalws::worker
