// Vary (RFC 9111 §4.1): a stored response answers a later request only when the request
// fields its Vary names match those of the request that caused it to be stored.
//
// The entry keeps a secondary key: for each field its Vary names (lower-cased, in order,
// each once) a line "name:value\n", the value normalised —
// - every line of the field joined with ", ", each OWS-trimmed (§4.1 allows combining
//   lines and normalising in ways known to mean the same);
// - Accept-Encoding reduced to the codings the client accepts (q > 0), lower-cased,
//   "x-gzip" as "gzip", sorted and each once: "gzip, br" and "br;q=1,gzip" both become
//   "br,gzip"; codings with q=0 and unknown codings are left out, so clients that differ
//   only in those share one variant.
// A field absent from the request matches only an entry where it was absent too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "worker/http/header_field.h"
#include "worker/http/request.h"

namespace scalws::worker::cache {

// The field names a response's Vary lines list, lower-cased, each once, joined with ",".
// `star` is set when one of them is "*" (never matches, §4.1).
std::string varyFieldNames(std::span<const HeaderField> response_headers, bool& star);

// The secondary key of `request` for `names` (as varyFieldNames returns them).
void appendSecondaryKey(std::string_view names, const Request& request, std::string& out);

// The normalised Accept-Encoding of one combined field value.
std::string normalizedAcceptEncoding(std::string_view value);

// The field names a stored secondary key lists, joined with "," (what appendSecondaryKey
// needs to rebuild it for another request). Empty for an empty key.
std::string secondaryKeyNames(std::string_view secondary_key);

}  // namespace scalws::worker::cache
