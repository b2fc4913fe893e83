// Serialises the records a FastCGI client sends (BEGIN_REQUEST, PARAMS, STDIN) by appending
// to a buffer the caller owns (codecs never touch a socket). Streams are split
// into records of at most 65535 content bytes; nothing is padded (padding is optional).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "worker/handlers/fastcgi/record.h"

namespace scalws::worker::fastcgi {

// BEGIN_REQUEST, role responder; `keep_conn` sets FCGI_KEEP_CONN.
void appendBeginRequest(std::string& out, bool keep_conn);

// One name-value pair in the FastCGI encoding (§3.4): lengths below 128 in one byte, else
// four bytes with the high bit set. Appends the pair only (no record header).
void appendNameValue(std::string& out, std::string_view name, std::string_view value);
// The two lengths of a pair whose name and value the caller appends itself.
void appendPairLengths(std::string& out, size_t name_length, size_t value_length);

// `content` as a stream of `type` records (PARAMS or STDIN), split at 65535 bytes. An empty
// `content` appends nothing: the end of a stream is endStream().
void appendStream(std::string& out, RecordType type, std::string_view content);
// The empty record that ends a PARAMS or STDIN stream.
void appendEndOfStream(std::string& out, RecordType type);

}  // namespace scalws::worker::fastcgi
