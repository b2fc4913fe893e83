// What HTTP/2 and HTTP/3 share between their codecs and the protocol-neutral Request: a
// request head that arrives as pseudo-header fields beside the regular ones (RFC 9113
// §8.3.1, RFC 9114 §4.3.1). The codec has already checked the pseudo-header set (each at
// most once, before the regular fields, only request ones) and the field bytes.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "worker/http/arena.h"
#include "worker/http/header_field.h"
#include "worker/http/request.h"

namespace scalws::worker {

struct PseudoHeaders {
  std::string_view method;
  std::string_view path;
  std::string_view authority;
  std::string_view protocol;  // RFC 8441's :protocol (extended CONNECT); empty otherwise
};

// Fills `request` from the pseudo-headers and `fields`, which it edits in place: cookie
// crumbs joined into one field (RFC 9113 §8.2.3, RFC 9114 §4.2.1) and, when only
// :authority names the host, a `host` field added (what HTTP/1.1 handlers and FastCGI's
// HTTP_HOST expect; nginx does the same). `request.headers` views `fields`, so they must
// not change afterwards. Returns 0, or 400 for a malformed request: a Host naming another
// authority than :authority, or an authority that is not a host.
uint16_t buildPseudoHeaderRequest(Request& request, HttpVersion version,
                                  const PseudoHeaders& pseudo, std::vector<HeaderField>& fields,
                                  Arena& arena, bool end_stream);

}  // namespace scalws::worker
