// Which encoding an on-the-fly compressed response uses, from the request's
// Accept-Encoding (RFC 9110 §12.5.3) and the route's `compress.encodings`.
//
// An encoding is acceptable when the client names it (gzip also as x-gzip) with q > 0, or
// names "*" with q > 0 and not the encoding itself. The highest q wins; among equal q the
// route's order decides. Identity is chosen when nothing is acceptable, when the header is
// absent (RFC 9110: no Accept-Encoding means any coding is acceptable, but a server that
// guesses breaks old clients, so none is assumed), and when the client names identity
// with a higher q than the best encoding. "identity;q=0" without an acceptable encoding
// still gets identity: a 415/406 would help nobody. A malformed q makes its element
// unacceptable (we only lose a compression).
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "common/config/response_config.h"
#include "worker/http/request.h"

namespace scalws::worker::compress {

using common::config::CompressEncoding;

// "br", "zstd", "gzip": the Content-Encoding value.
std::string_view encodingName(CompressEncoding encoding);

// nullopt: identity.
std::optional<CompressEncoding> chooseEncoding(const Request& request,
                                               std::span<const CompressEncoding> configured);
// From the field values of every Accept-Encoding line (what the Request overload reads).
std::optional<CompressEncoding> chooseEncoding(std::span<const std::string_view> accept_encoding,
                                               std::span<const CompressEncoding> configured);

}  // namespace scalws::worker::compress
