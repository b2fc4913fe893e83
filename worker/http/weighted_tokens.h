// WeightedTokens: the elements of a list such as Accept-Encoding ("br;q=1, gzip;q=0.5, *;q=0")
// with their weights (RFC 9110 §12.4.2), read in order. Both the static handler's choice of a
// precompressed sibling and the on-the-fly compressor's read the header through it.
#pragma once

#include <string_view>

namespace scalws::worker {

class WeightedTokens {
 public:
  explicit WeightedTokens(std::string_view list) : rest_(list) {}

  // The next non-empty element: its token (without parameters or surrounding whitespace)
  // and its q in thousandths (1000 without a q parameter, 0 when the q is malformed, so a
  // bad weight never makes something acceptable). False at the end of the list.
  bool next(std::string_view& token, int& q);

 private:
  std::string_view rest_;
};

}  // namespace scalws::worker
