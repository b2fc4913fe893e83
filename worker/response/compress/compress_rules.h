// A route's `compress`, compiled: which responses are compressed on the fly, and with
// what.
//
// A response is compressible (so it varies by Accept-Encoding, and carries Vary) when all
// hold:
// - its status has a body worth compressing: 2xx other than 204, 205 and 206, 3xx other
//   than 304, 4xx and 5xx (error pages too);
// - it has no Content-Encoding (already encoded: precompressed static variants, an
//   upstream that compressed) and no Content-Range (RFC 9110 §14.4: a range is of the
//   identity representation);
// - its Cache-Control has no no-transform (RFC 9111 §5.2.2.6: the application asked that
//   its bytes reach the client as they are);
// - its Content-Type is one of `types` ("text/*" matches every text type; parameters such
//   as charset are ignored);
// - its Content-Length, when it has one, is at least `min_size`.
// It is then compressed when the client accepts one of `encodings` (coding_choice.h).
// A 304 carries what the 200 would: Vary, and the ETag weakened when the request chose
// an encoding (its type is not known then; the validators must still match the stored
// response's).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/config/response_config.h"
#include "worker/http/header_field.h"
#include "worker/http/request.h"

namespace scalws::worker::compress {

using common::config::CompressEncoding;

class CompressRules {
 public:
  explicit CompressRules(const common::config::CompressConfig& config);

  struct Decision {
    bool varies = false;                       // the answer depends on Accept-Encoding: add Vary
    std::optional<CompressEncoding> encoding;  // set: compress with it
  };
  Decision decide(const Request& request, uint16_t status, std::span<const HeaderField> headers,
                  std::optional<uint64_t> content_length) const;

  bool typeMatches(std::string_view content_type) const;
  int level(CompressEncoding encoding) const;
  std::span<const CompressEncoding> encodings() const { return encodings_; }
  uint64_t minSize() const { return min_size_; }

 private:
  std::vector<CompressEncoding> encodings_;
  std::vector<std::string> exact_;     // "text/html"
  std::vector<std::string> wildcard_;  // "text" for "text/*"
  uint64_t min_size_;
  int levels_[3];  // by CompressEncoding
};

}  // namespace scalws::worker::compress
