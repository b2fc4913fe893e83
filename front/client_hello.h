// The server name a TLS client asks for, read from the first bytes of its connection without
// terminating TLS: the ClientHello's server_name extension (RFC 6066 §3).
//
// The front peeks (MSG_PEEK) and calls this on everything received so far; it never
// consumes a byte, so the instance's worker reads the same ClientHello and does the
// handshake itself. The ClientHello may come in any number of TLS records (a handshake
// message can be fragmented across records, RFC 8446 §5.1) and TCP segments; this parser
// reassembles the handshake message from the records' payloads, and says kNeedMore as long
// as what it saw is a consistent prefix.
//
// Bounds: a ClientHello larger than kMaxClientHello bytes is kInvalid, so the front never
// needs to look at more than kMaxPeekBytes of a connection. Anything that is not a TLS
// handshake record carrying a ClientHello first (an SSLv2 hello, an alert, plain HTTP, a
// zero-length or oversized record, lengths that do not add up, a duplicate extension, a
// server name that is not a DNS name) is kInvalid.
//
// Pure: no socket, no allocation but the name found. A test feeds it bytes whole, byte by
// byte or in random pieces.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace scalws::front {

// A ClientHello is well below this (a few hundred bytes, ~2 KiB with post-quantum key
// shares); 16 KiB is what one TLS record may hold.
inline constexpr size_t kMaxClientHello = 16 * 1024;
// The records that carry kMaxClientHello bytes: at worst one record header per byte of a
// pathologically fragmented hello is refused before then (see kMaxHelloRecords).
inline constexpr size_t kMaxHelloRecords = 64;
inline constexpr size_t kMaxPeekBytes = kMaxClientHello + 4 + kMaxHelloRecords * 5;

struct ServerNamePeek {
  enum class Outcome {
    kNeedMore,  // a consistent prefix of a ClientHello: wait for more bytes
    kName,      // `name` holds the server name, lower-case, without a trailing dot
    kNoName,    // a whole ClientHello without a host_name in server_name
    kInvalid,   // not a TLS ClientHello this front will route
  };
  Outcome outcome = Outcome::kNeedMore;
  std::string name;
};

ServerNamePeek peekServerName(std::string_view bytes);

// The same answer from the bare handshake message (type, 3-byte length, body) without
// records: how QUIC carries the ClientHello, in CRYPTO frames (RFC 9001 §4). `handshake_bytes`
// is the message's first bytes; anything after a whole message is not looked at.
ServerNamePeek peekServerNameInHandshake(std::string_view handshake_bytes);

}  // namespace scalws::front
