// Which precompressed variants (file.br, file.gz) a request accepts, best first
// (RFC 9110 §12.5.3 Accept-Encoding, q-values honoured).
//
// A coding is acceptable when the client lists it (gzip also as x-gzip) with q > 0, or
// lists "*" with q > 0 and does not name the coding itself. No Accept-Encoding at all
// means identity only. Higher q first; equal q keeps the route's `precompressed` order.
// A malformed q makes its element unacceptable (we only lose a compression).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "worker/http/request.h"

namespace scalws::worker {

enum class ContentCoding : uint8_t { kBrotli, kGzip };

std::string_view contentCodingName(ContentCoding coding);  // "br", "gzip"
std::string_view variantSuffix(ContentCoding coding);      // ".br", ".gz"

struct CodingPreference {
  std::array<ContentCoding, 2> order{};
  size_t count = 0;
};

// From every Accept-Encoding line of `request`.
CodingPreference preferredCodings(const Request& request,
                                  std::span<const ContentCoding> configured);
// From one field value (what the Request overload combines); for tests.
CodingPreference preferredCodings(std::string_view accept_encoding,
                                  std::span<const ContentCoding> configured);

}  // namespace scalws::worker
