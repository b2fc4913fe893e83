// The status of a request llhttp refused, and the transfer-coding rules it depends on.
//
// llhttp reports where it stopped, not why in HTTP's terms: an unknown but well-formed
// method is 501, a well-formed version we do not speak 505, everything else 400. The
// answer may need bytes past the one llhttp refused (the rest of a method token, the rest
// of a version), so it is judged on everything received so far and may be "not yet".
#pragma once

#include <llhttp.h>

#include <cstdint>
#include <span>

#include "worker/http/header_field.h"

namespace scalws::worker::http1 {

// Which transfer codings a request carries; we decode only "chunked" (RFC 9112 §6.1).
enum class TransferCodings { kChunkedOnly, kChunkedLastWithOthers, kChunkedNotLast };
TransferCodings classifyTransferEncoding(std::span<const HeaderField> headers);

// `head_start`: the first byte of the message, `error_pos`: the byte llhttp refused,
// `available_end`: the end of the bytes received so far, all in one contiguous buffer;
// `headers`: the header fields parsed so far. Returns 400, 501 or 505, or 0 while the
// bytes so far do not decide between them.
uint16_t statusForParserError(llhttp_errno_t err, const char* head_start, const char* error_pos,
                              const char* available_end, std::span<const HeaderField> headers);

}  // namespace scalws::worker::http1
