#include "front/quic_initial.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <memory>

#include "common/hkdf.h"

namespace scalws::front {
// A unity build shares this anonymous namespace with the folder's other files: names here
// must not repeat theirs (hence PacketReader beside client_hello.cpp's Reader).
namespace {

using DatagramOutcome = InitialDatagram::Outcome;
using HelloOutcome = ServerNamePeek::Outcome;

// RFC 9000 §14.1: a server MUST discard an Initial in a datagram smaller than this.
constexpr size_t kMinInitialDatagram = 1200;
// §7.2: a client's first Initial has a DCID of at least 8 bytes (ngtcp2 refuses less).
constexpr size_t kMinInitialDcid = 8;
constexpr size_t kSampleLength = 16;  // RFC 9001 §5.4.2
constexpr size_t kTagLength = 16;     // AEAD_AES_128_GCM

// RFC 9001 §5.2 and RFC 9369 §3.3.1.
constexpr uint8_t kSaltV1[] = {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
                               0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a};
constexpr uint8_t kSaltV2[] = {0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
                               0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9};

bool knownVersion(uint32_t version) {
  return version == kQuicVersion1 || version == kQuicVersion2;
}

// The two type bits of a long header (RFC 9000 §17.2; RFC 9369 §3.2 renumbers them).
LongHeader::Type packetType(uint32_t version, uint8_t first_byte) {
  static constexpr LongHeader::Type kV1[] = {LongHeader::Type::kInitial, LongHeader::Type::kZeroRtt,
                                             LongHeader::Type::kHandshake,
                                             LongHeader::Type::kRetry};
  static constexpr LongHeader::Type kV2[] = {LongHeader::Type::kRetry, LongHeader::Type::kInitial,
                                             LongHeader::Type::kZeroRtt,
                                             LongHeader::Type::kHandshake};
  size_t bits = (first_byte >> 4) & 3;
  if (version == kQuicVersion1) return kV1[bits];
  if (version == kQuicVersion2) return kV2[bits];
  return LongHeader::Type::kUnknownVersion;
}

// Bounds-checked reads over one span; any read past the end sets failed() and returns 0.
class PacketReader {
 public:
  explicit PacketReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  uint64_t u8() { return take(1); }
  uint64_t u32() { return take(4); }
  // RFC 9000 §16: the two high bits of the first byte give the length.
  uint64_t varint() {
    if (failed_ || done()) return fail();
    size_t n = size_t{1} << (bytes_[pos_] >> 6);
    uint64_t v = take(n);
    return v & ((uint64_t{1} << (8 * n - 2)) - 1);
  }
  std::span<const uint8_t> bytes(uint64_t n) {
    if (failed_ || remaining() < n) {
      fail();
      return {};
    }
    std::span<const uint8_t> out = bytes_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  bool done() const { return pos_ == bytes_.size(); }
  bool failed() const { return failed_; }

 private:
  uint64_t take(size_t n) {
    if (failed_ || remaining() < n) return fail();
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | bytes_[pos_ + i];
    pos_ += n;
    return v;
  }
  uint64_t fail() {
    failed_ = true;
    return 0;
  }

  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// The long header up to the end of the source connection ID (RFC 8999 §5.1).
struct Invariants {
  uint8_t first_byte = 0;
  uint32_t version = 0;
  std::span<const uint8_t> dcid;
  std::span<const uint8_t> scid;
};

bool readInvariants(PacketReader& r, Invariants& out) {
  out.first_byte = static_cast<uint8_t>(r.u8());
  out.version = static_cast<uint32_t>(r.u32());
  out.dcid = r.bytes(r.u8());
  out.scid = r.bytes(r.u8());
  return !r.failed();
}

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

// RFC 8446 §7.1 HKDF-Expand-Label with an empty context.
bool expandLabel(common::HkdfSha256& hkdf, std::span<const uint8_t> secret, std::string_view label,
                 std::span<uint8_t> out) {
  static constexpr std::string_view kPrefix = "tls13 ";
  uint8_t info[2 + 1 + 255 + 1];
  size_t n = 0;
  info[n++] = static_cast<uint8_t>(out.size() >> 8);
  info[n++] = static_cast<uint8_t>(out.size());
  info[n++] = static_cast<uint8_t>(kPrefix.size() + label.size());
  std::memcpy(info + n, kPrefix.data(), kPrefix.size());
  n += kPrefix.size();
  std::memcpy(info + n, label.data(), label.size());
  n += label.size();
  info[n++] = 0;
  return hkdf.expand(secret, {info, n}, out);
}

// The packet-number bytes' mask from the sample (RFC 9001 §5.4.3, AES-128-ECB).
bool headerMask(EVP_CIPHER_CTX* ctx, const InitialKeys& keys, const uint8_t* sample,
                uint8_t (&mask)[kSampleLength]) {
  int len = 0;
  return EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, keys.hp.data(), nullptr) == 1 &&
         EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
         EVP_EncryptUpdate(ctx, mask, &len, sample, kSampleLength) == 1 && len == kSampleLength;
}

// AEAD_AES_128_GCM open in place (RFC 9001 §5.3): `text` is ciphertext then tag.
bool openInPlace(EVP_CIPHER_CTX* ctx, const InitialKeys& keys, uint64_t packet_number,
                 std::span<const uint8_t> aad, std::span<uint8_t> text) {
  std::array<uint8_t, 12> nonce = keys.iv;
  for (size_t i = 0; i < 8; ++i) nonce[11 - i] ^= static_cast<uint8_t>(packet_number >> (8 * i));
  size_t cipher_len = text.size() - kTagLength;
  int len = 0;
  return EVP_DecryptInit_ex(ctx, EVP_aes_128_gcm(), nullptr, nullptr, nullptr) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, nonce.size(), nullptr) == 1 &&
         EVP_DecryptInit_ex(ctx, nullptr, nullptr, keys.key.data(), nonce.data()) == 1 &&
         EVP_DecryptUpdate(ctx, nullptr, &len, aad.data(), static_cast<int>(aad.size())) == 1 &&
         EVP_DecryptUpdate(ctx, text.data(), &len, text.data(), static_cast<int>(cipher_len)) ==
             1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kTagLength, text.data() + cipher_len) ==
             1 &&
         EVP_DecryptFinal_ex(ctx, text.data() + cipher_len, &len) == 1;
}

// What became of one Initial packet: its fragments added, dropped alone (RFC 9000 §12.2:
// the datagram's other packets still count), or the whole datagram refused.
enum class PacketFate { kRead, kDropped, kRefused };

// RFC 9000 §12.4 and §19: the frames an Initial may carry. CRYPTO fragments are appended
// to `out`; the caller rolls them back if the packet is dropped.
PacketFate readFrames(std::span<const uint8_t> payload, InitialDatagram& out) {
  PacketReader r(payload);
  while (!r.done()) {
    // A type is a varint, but every type allowed here fits one byte; a longer encoding is
    // one §12.4 lets us refuse.
    uint64_t type = r.u8();
    switch (type) {
      case 0x00:  // PADDING
      case 0x01:  // PING
        break;
      case 0x02:  // ACK: largest, delay, range count, first range, ranges
      case 0x03: {
        r.varint();
        r.varint();
        uint64_t ranges = r.varint();
        r.varint();
        // Each range is two varints, at least two bytes: the loop ends with the payload.
        for (uint64_t i = 0; i < ranges && !r.failed(); ++i) {
          r.varint();
          r.varint();
        }
        if (type == 0x03) {  // with ECN counts
          r.varint();
          r.varint();
          r.varint();
        }
        if (r.failed()) {
          out.error = "a truncated ACK frame";
          return PacketFate::kRefused;
        }
        break;
      }
      case 0x06: {  // CRYPTO: offset, length, data
        uint64_t offset = r.varint();
        std::span<const uint8_t> data = r.bytes(r.varint());
        if (r.failed()) {
          out.error = "a truncated CRYPTO frame";
          return PacketFate::kRefused;
        }
        if (out.fragment_count == kMaxCryptoFragments) {
          out.error = "too many CRYPTO frames";
          return PacketFate::kRefused;
        }
        out.fragments[out.fragment_count++] = CryptoFragment{offset, data};
        break;
      }
      case 0x1c:  // CONNECTION_CLOSE: the client gives up; nothing in this packet counts
        out.error = "the client closes the connection";
        return PacketFate::kDropped;
      default:
        out.error = "a frame not allowed in an Initial";
        return PacketFate::kRefused;
    }
  }
  return PacketFate::kRead;
}

// Removes header protection and opens one Initial packet in `packet` (a copy in the scratch
// buffer), whose packet number starts at `pn_offset`, and reads its frames.
PacketFate openInitial(EVP_CIPHER_CTX* ctx, const InitialKeys& keys, std::span<uint8_t> packet,
                       size_t pn_offset, InitialDatagram& out) {
  // RFC 9001 §5.4.2: the sample starts 4 bytes after the packet number's start.
  if (packet.size() < pn_offset + 4 + kSampleLength) {
    out.error = "an Initial too short for its header protection sample";
    return PacketFate::kRefused;
  }
  uint8_t mask[kSampleLength];
  if (!headerMask(ctx, keys, packet.data() + pn_offset + 4, mask)) {
    out.error = "AES failed";
    return PacketFate::kRefused;
  }
  packet[0] ^= mask[0] & 0x0f;  // §5.4.1: four bits of a long header's first byte
  size_t pn_length = (packet[0] & 3) + 1;
  uint64_t packet_number = 0;
  for (size_t i = 0; i < pn_length; ++i) {
    packet[pn_offset + i] ^= mask[1 + i];
    packet_number = (packet_number << 8) | packet[pn_offset + i];
  }
  // RFC 9000 §A.3 with nothing received yet: the truncated number is the number.
  size_t payload_at = pn_offset + pn_length;
  if (!openInPlace(ctx, keys, packet_number, packet.first(payload_at),
                   packet.subspan(payload_at))) {
    out.error = "an Initial that fails authentication";
    return PacketFate::kDropped;
  }
  // RFC 9000 §17.2: reserved bits are checked once both protections are off.
  if ((packet[0] & 0x0c) != 0) {
    out.error = "reserved bits set in an Initial";
    return PacketFate::kRefused;
  }
  std::span<const uint8_t> payload =
      packet.subspan(payload_at, packet.size() - payload_at - kTagLength);
  if (payload.empty()) {  // §12.4: a packet without frames is a PROTOCOL_VIOLATION
    out.error = "an Initial without frames";
    return PacketFate::kRefused;
  }
  return readFrames(payload, out);
}

InitialDatagram refused(InitialDatagram out, std::string_view error) {
  out.outcome = DatagramOutcome::kInvalid;
  out.error = error;
  out.fragment_count = 0;
  return out;
}

InitialDatagram notInitial(InitialDatagram out, std::string_view why) {
  out.outcome = DatagramOutcome::kNotInitial;
  out.error = why;
  out.fragment_count = 0;
  return out;
}

}  // namespace

ConnectionId ConnectionId::of(std::span<const uint8_t> id) {
  assert(id.size() <= kMaxConnectionId);
  ConnectionId out;
  out.size = static_cast<uint8_t>(std::min(id.size(), kMaxConnectionId));
  std::copy_n(id.begin(), out.size, out.bytes.begin());
  return out;
}

std::optional<LongHeader> readLongHeader(std::span<const uint8_t> datagram) {
  if (datagram.empty() || (datagram[0] & 0x80) == 0) return std::nullopt;
  PacketReader r(datagram);
  Invariants inv;
  if (!readInvariants(r, inv)) return std::nullopt;
  if (knownVersion(inv.version) &&
      (inv.dcid.size() > kMaxConnectionId || inv.scid.size() > kMaxConnectionId)) {
    return std::nullopt;
  }
  return LongHeader{inv.version, packetType(inv.version, inv.first_byte), inv.dcid, inv.scid};
}

std::optional<InitialKeys> deriveClientInitialKeys(uint32_t version,
                                                   std::span<const uint8_t> dcid) {
  if (!knownVersion(version)) return std::nullopt;
  bool v2 = version == kQuicVersion2;
  common::HkdfSha256 hkdf;
  uint8_t initial_secret[32];
  uint8_t client_secret[32];
  InitialKeys keys;
  bool ok =
      hkdf.extract(dcid, v2 ? std::span<const uint8_t>(kSaltV2) : std::span<const uint8_t>(kSaltV1),
                   initial_secret) &&
      expandLabel(hkdf, initial_secret, "client in", client_secret) &&
      expandLabel(hkdf, client_secret, v2 ? "quicv2 key" : "quic key", keys.key) &&
      expandLabel(hkdf, client_secret, v2 ? "quicv2 iv" : "quic iv", keys.iv) &&
      expandLabel(hkdf, client_secret, v2 ? "quicv2 hp" : "quic hp", keys.hp);
  if (!ok) return std::nullopt;
  return keys;
}

InitialDatagram decodeInitialDatagram(std::span<const uint8_t> datagram,
                                      std::span<uint8_t, kMaxQuicDatagram> scratch) {
  InitialDatagram out;
  if (datagram.size() > kMaxQuicDatagram) return refused(out, "a datagram over 2048 bytes");
  if (datagram.empty()) return refused(out, "an empty datagram");
  // Everything is read from the copy, so the spans returned all point into it.
  std::copy(datagram.begin(), datagram.end(), scratch.begin());
  std::span<uint8_t> bytes = scratch.first(datagram.size());
  std::optional<InitialKeys> keys;
  CipherCtx cipher;
  bool saw_initial = false;
  std::string_view dropped;  // why the last Initial dropped alone was dropped
  size_t pos = 0;
  for (bool first = true; pos < bytes.size(); first = false) {
    // §12.2: packets after the first belong to the same connection (the same version and
    // DCID) or are ignored, and a short header runs to the datagram's end; so anything
    // after the first that does not read as one of ours ends the walk.
    if ((bytes[pos] & 0x80) == 0) {
      if (first) return notInitial(out, "a short header");
      break;
    }
    PacketReader r(bytes.subspan(pos));
    Invariants inv;
    bool whole = readInvariants(r, inv);
    if (!first &&
        (!whole || inv.version != out.version || !std::ranges::equal(inv.dcid, out.dcid))) {
      break;
    }
    if (!whole) return refused(out, "a truncated long header");
    if (!knownVersion(inv.version)) return refused(out, "an unsupported QUIC version");
    if (inv.dcid.size() > kMaxConnectionId || inv.scid.size() > kMaxConnectionId) {
      return refused(out, "a connection ID over 20 bytes");
    }
    out.version = inv.version;
    out.dcid = inv.dcid;
    LongHeader::Type type = packetType(inv.version, inv.first_byte);
    if (type == LongHeader::Type::kRetry) {  // only servers send Retry; it has no length
      if (first) return notInitial(out, "a Retry packet");
      break;
    }
    std::span<const uint8_t> token;
    if (type == LongHeader::Type::kInitial) token = r.bytes(r.varint());
    uint64_t length = r.varint();
    if (r.failed() || length > r.remaining()) {
      if (first) {
        return refused(
            out, r.failed() ? "a truncated long header" : "a packet length past the datagram");
      }
      break;
    }
    size_t pn_offset = r.pos();
    std::span<uint8_t> packet = bytes.subspan(pos, pn_offset + length);
    pos += packet.size();
    if (type != LongHeader::Type::kInitial) continue;  // 0-RTT and Handshake are not read

    if (datagram.size() < kMinInitialDatagram) {
      return refused(out, "an Initial in a datagram under 1200 bytes");
    }
    if (inv.dcid.size() < kMinInitialDcid) return refused(out, "an Initial DCID under 8 bytes");
    if (!saw_initial) {
      saw_initial = true;
      out.scid = inv.scid;
      out.token = token;
      keys = deriveClientInitialKeys(inv.version, inv.dcid);
      cipher.reset(EVP_CIPHER_CTX_new());
      if (!keys || !cipher) return refused(out, "OpenSSL failed");
    }
    size_t fragments_before = out.fragment_count;
    switch (openInitial(cipher.get(), *keys, packet, pn_offset, out)) {
      case PacketFate::kRead:
        ++out.initial_packets;
        break;
      case PacketFate::kDropped:
        out.fragment_count = fragments_before;
        dropped = out.error;
        break;
      case PacketFate::kRefused:
        return refused(out, out.error);
    }
  }
  if (out.initial_packets > 0) {
    out.outcome = DatagramOutcome::kInitial;
    out.error = {};
  } else if (saw_initial) {
    out = refused(out, dropped);
  } else {
    out = notInitial(out, "no Initial packet");
  }
  return out;
}

bool InitialReassembly::bindConnection(uint32_t version, const ConnectionId& dcid) {
  if (version_ == 0) {
    version_ = version;
    dcid_ = dcid;
    return true;
  }
  return version == version_ && dcid == dcid_;
}

const ServerNamePeek& InitialReassembly::add(uint64_t offset, std::span<const uint8_t> data) {
  if (result_.outcome != HelloOutcome::kNeedMore) return result_;
  if (offset > kMaxInitialCrypto || data.size() > kMaxInitialCrypto - offset) {
    result_ = ServerNamePeek{HelloOutcome::kInvalid, {}};
    error_ = "CRYPTO data past the ClientHello bound";
    return result_;
  }
  size_t end = offset + data.size();
  if (end > bytes_.size()) {
    bytes_.resize(end);
    have_.resize((end + 63) / 64);
  }
  for (size_t i = 0; i < data.size(); ++i) {
    size_t at = offset + i;
    char byte = static_cast<char>(data[i]);
    uint64_t bit = uint64_t{1} << (at % 64);
    if ((have_[at / 64] & bit) != 0) {
      // RFC 9000 §2.2 lets a receiver refuse retransmitted bytes that differ: reading the
      // name from one copy while the worker keeps the other would route by a lie.
      if (bytes_[at] != byte) {
        result_ = ServerNamePeek{HelloOutcome::kInvalid, {}};
        error_ = "CRYPTO bytes that disagree with earlier ones";
        return result_;
      }
      continue;
    }
    have_[at / 64] |= bit;
    bytes_[at] = byte;
  }
  size_t before = contiguous_;
  while (contiguous_ < bytes_.size() && (have_[contiguous_ / 64] >> (contiguous_ % 64)) & 1) {
    ++contiguous_;
  }
  if (contiguous_ > before) {
    result_ = peekServerNameInHandshake(std::string_view(bytes_).substr(0, contiguous_));
    if (result_.outcome == HelloOutcome::kInvalid) error_ = "not a ClientHello the front routes";
  }
  return result_;
}

QuicInitialPeek peekQuicInitial(std::span<const uint8_t> datagram, InitialReassembly& state) {
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  InitialDatagram decoded = decodeInitialDatagram(datagram, scratch);
  QuicInitialPeek peek;
  peek.datagram = decoded.outcome;
  peek.error = decoded.error;
  if (decoded.outcome == DatagramOutcome::kInitial) {
    if (!state.bindConnection(decoded.version, ConnectionId::of(decoded.dcid))) {
      peek.datagram = DatagramOutcome::kInvalid;
      peek.error = "another connection's Initial";
    } else {
      for (const CryptoFragment& f : decoded.crypto()) state.add(f.offset, f.data);
    }
  }
  peek.hello = state.result();
  if (peek.error.empty() && peek.hello.outcome == HelloOutcome::kInvalid)
    peek.error = state.error();
  return peek;
}

}  // namespace scalws::front
