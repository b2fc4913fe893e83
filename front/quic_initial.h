// The server name a QUIC client asks for, read from its first Initial datagrams without
// terminating QUIC: on a shared UDP address the front decrypts the client's Initial packets
// (their keys derive from the client's Destination Connection ID alone, RFC 9001 §5.2), reads
// the ClientHello from their CRYPTO frames, and passes the datagrams on unchanged to the
// instance that serves the name. The instance's worker decrypts them again and handshakes.
//
// Three layers, each pure (no socket, no global state):
//   - readLongHeader: the version-independent long header (RFC 8999 §5.1) and, for QUIC v1
//     (RFC 9000) and v2 (RFC 9369), the packet type. No decryption: how the router keys
//     datagrams it does not decrypt.
//   - decodeInitialDatagram: every Initial packet of one datagram (coalesced packets, §12.2,
//     are walked; 0-RTT and Handshake ones are skipped, a short header ends the walk) is
//     decrypted into the caller's scratch buffer and its frames read; the CRYPTO fragments
//     point into that buffer. The datagram is never written to.
//   - InitialReassembly: the CRYPTO stream from offset 0 across datagrams, in any order
//     (a ~1.8 KB ClientHello with post-quantum key shares spans two datagrams, and Chrome
//     shuffles its extensions, so the SNI may be in either), asked of
//     peekServerNameInHandshake as soon as a prefix is contiguous.
// peekQuicInitial does all three for one datagram of one connection.
//
// Bounds and what is refused (InitialDatagram::kInvalid, the datagram is to be dropped):
//   - a datagram over kMaxQuicDatagram bytes, or under 1200 when it holds an Initial (§14.1);
//   - in the first packet, a version other than v1/v2 or lengths past the datagram;
//   - a connection ID over 20 bytes, a DCID under 8 in an Initial (§7.2), an Initial too
//     short for its header protection sample (RFC 9001 §5.4.2);
//   - an Initial that fails authentication or closes the connection (CONNECTION_CLOSE),
//     unless another Initial in the datagram is good (then only that packet is dropped);
//   - in an authenticated Initial: non-zero reserved bits, no frames, a frame not allowed
//     there (§12.4: only PADDING, PING, ACK, CRYPTO, CONNECTION_CLOSE), a truncated frame,
//     more than kMaxCryptoFragments CRYPTO frames.
// A later packet that does not read as the first one's connection (§12.2: same version and
// DCID) ends the walk without harm. The reassembly refuses (its answer is then kInvalid for
// good) CRYPTO bytes past kMaxInitialCrypto, overlapping bytes that disagree, and whatever
// peekServerNameInHandshake refuses.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/net/datagram.h"
#include "front/client_hello.h"

namespace scalws::front {

inline constexpr uint32_t kQuicVersion1 = 0x00000001;
inline constexpr uint32_t kQuicVersion2 = 0x6b3343cf;
// A client's datagrams are at least 1200 bytes and in practice at most a path MTU; a
// larger one is refused rather than decrypted, so the scratch buffer has a fixed size.
using common::net::kMaxQuicDatagram;
inline constexpr size_t kMaxConnectionId = 20;  // RFC 9000 §17.2, for v1 and v2
// CRYPTO frames per datagram (Chrome splits its ClientHello into a few, in random order).
inline constexpr size_t kMaxCryptoFragments = 64;
// The handshake message header and the largest ClientHello body peekServerName accepts.
inline constexpr size_t kMaxInitialCrypto = 4 + kMaxClientHello;

struct ConnectionId {
  std::array<uint8_t, kMaxConnectionId> bytes{};  // zero past `size`, so == compares values
  uint8_t size = 0;

  static ConnectionId of(std::span<const uint8_t> id);  // at most kMaxConnectionId bytes
  std::span<const uint8_t> view() const { return {bytes.data(), size}; }
  bool operator==(const ConnectionId&) const = default;
};

struct LongHeader {
  enum class Type { kInitial, kZeroRtt, kHandshake, kRetry, kUnknownVersion };
  uint32_t version = 0;
  Type type = Type::kUnknownVersion;  // read for v1 and v2 only
  std::span<const uint8_t> dcid;      // into the datagram
  std::span<const uint8_t> scid;
};

// nullopt for a short header, a datagram shorter than its connection IDs say, or a v1/v2
// connection ID over kMaxConnectionId bytes (other versions may have up to 255).
std::optional<LongHeader> readLongHeader(std::span<const uint8_t> datagram);

// The client's Initial keys for `version` (v1 or v2) and the DCID of its first Initial:
// RFC 9001 §5.2, RFC 9369 §3.3. nullopt for another version or when OpenSSL fails.
struct InitialKeys {
  std::array<uint8_t, 16> key;
  std::array<uint8_t, 12> iv;
  std::array<uint8_t, 16> hp;
};
std::optional<InitialKeys> deriveClientInitialKeys(uint32_t version, std::span<const uint8_t> dcid);

struct CryptoFragment {
  uint64_t offset = 0;
  std::span<const uint8_t> data;  // into the scratch buffer
};

struct InitialDatagram {
  enum class Outcome {
    kInitial,     // at least one Initial packet decrypted: the fields below are set
    kNotInitial,  // no Initial: a short header first, a Retry, or 0-RTT/Handshake only
    kInvalid,     // see the header comment; `error` says which rule
  };
  Outcome outcome = Outcome::kInvalid;
  std::string_view error;  // a literal: why not kInitial
  uint32_t version = 0;
  std::span<const uint8_t> dcid;  // all spans into the scratch buffer
  std::span<const uint8_t> scid;
  std::span<const uint8_t> token;  // of the first Initial (from a Retry or NEW_TOKEN)
  size_t initial_packets = 0;      // decrypted
  std::array<CryptoFragment, kMaxCryptoFragments> fragments;
  size_t fragment_count = 0;

  std::span<const CryptoFragment> crypto() const { return {fragments.data(), fragment_count}; }
};

// The result's spans stay valid as long as `scratch` is neither changed nor freed.
InitialDatagram decodeInitialDatagram(std::span<const uint8_t> datagram,
                                      std::span<uint8_t, kMaxQuicDatagram> scratch);

// The CRYPTO stream of one connection's Initials, up to kMaxInitialCrypto bytes. Bytes may
// come in any order and more than once, as long as they agree. Once the answer is not
// kNeedMore it never changes.
class InitialReassembly {
 public:
  const ServerNamePeek& add(uint64_t offset, std::span<const uint8_t> data);
  const ServerNamePeek& result() const { return result_; }
  std::string_view error() const { return error_; }  // why kInvalid, a literal
  size_t contiguous() const { return contiguous_; }  // bytes held from offset 0 on

  // The connection's version and DCID: the first call keeps them, later ones compare.
  bool bindConnection(uint32_t version, const ConnectionId& dcid);
  uint32_t version() const { return version_; }  // 0 before the first bindConnection
  const ConnectionId& dcid() const { return dcid_; }

 private:
  std::string bytes_;
  std::vector<uint64_t> have_;  // one bit per byte of bytes_
  size_t contiguous_ = 0;
  ServerNamePeek result_;
  std::string_view error_;
  uint32_t version_ = 0;
  ConnectionId dcid_;
};

struct QuicInitialPeek {
  InitialDatagram::Outcome datagram = InitialDatagram::Outcome::kInvalid;
  std::string_view error;  // why the datagram or the hello is refused
  ServerNamePeek hello;    // the connection's answer after this datagram
};

// One datagram of the connection `state` collects (the router keys states by the DCID of
// the client's first Initial). A datagram that is not kInitial leaves the state as it was;
// so does a good one with another version or DCID (then kInvalid, "another connection").
QuicInitialPeek peekQuicInitial(std::span<const uint8_t> datagram, InitialReassembly& state);

}  // namespace scalws::front
