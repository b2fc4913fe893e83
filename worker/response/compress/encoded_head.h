// The changes a compressed response (or the 304 standing for one) makes to its head's
// fields, RFC 9110 §8.4 and §8.8.3: the representation is a different one.
#pragma once

#include <string_view>
#include <vector>

#include "worker/http/arena.h"
#include "worker/http/header_field.h"

namespace scalws::worker::compress {

// Vary gains Accept-Encoding unless a Vary field already names it or is "*".
void addVaryAcceptEncoding(std::vector<HeaderField>& fields);
// A strong ETag becomes weak (W/"..."): the compressed bytes are not the identity's, so
// a strong validator would let a client combine ranges of the two. The new value lives
// in `arena`.
void weakenEtag(std::vector<HeaderField>& fields, Arena& arena);
// Every field named `name` goes.
void dropFields(std::vector<HeaderField>& fields, std::string_view name);

}  // namespace scalws::worker::compress
