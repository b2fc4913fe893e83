// A test-side QUIC client for the front's tests and fuzz target: CRYPTO frames,
// ClientHellos and client Initial packets protected as RFC 9001 §5 says (checked against
// its Appendix A.2 byte for byte in quic_initial_test.cpp). No test framework: seal()
// returns no bytes when OpenSSL fails, which any caller notices.
#pragma once

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "front/quic_initial.h"

namespace scalws::front::test {

using Bytes = std::vector<uint8_t>;

inline void appendBe(Bytes& out, uint64_t v, size_t n) {
  for (size_t i = n; i-- > 0;) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

inline void appendVarint(Bytes& out, uint64_t v) {
  if (v < 64) {
    appendBe(out, v, 1);
  } else if (v < 16384) {
    appendBe(out, 0x4000 | v, 2);
  } else {
    appendBe(out, 0x80000000u | v, 4);
  }
}

inline Bytes cryptoFrame(uint64_t offset, std::span<const uint8_t> data) {
  Bytes f{0x06};
  appendVarint(f, offset);
  appendVarint(f, data.size());
  f.insert(f.end(), data.begin(), data.end());
  return f;
}

inline Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline Bytes tlsExtension(uint16_t type, const Bytes& data) {
  Bytes e;
  appendBe(e, type, 2);
  appendBe(e, data.size(), 2);
  e.insert(e.end(), data.begin(), data.end());
  return e;
}

inline Bytes sniExtension(std::string_view name) {
  Bytes entry{0};
  appendBe(entry, name.size(), 2);
  entry.insert(entry.end(), name.begin(), name.end());
  Bytes list;
  appendBe(list, entry.size(), 2);
  list.insert(list.end(), entry.begin(), entry.end());
  return tlsExtension(0, list);
}

// A ClientHello handshake message: `before` bytes of a key_share-like extension first (a
// post-quantum share is ~1.2 KB), then the server name when there is one.
inline Bytes quicClientHello(std::string_view name, size_t before = 0) {
  Bytes extensions;
  if (before > 0) extensions = tlsExtension(51, Bytes(before, 0x5a));
  if (!name.empty()) extensions = concat({extensions, sniExtension(name)});
  Bytes body;
  appendBe(body, 0x0303, 2);
  body.insert(body.end(), 32, 'r');
  body.push_back(0);  // no session id: QUIC has no middlebox compatibility mode
  appendBe(body, 2, 2);
  appendBe(body, 0x1301, 2);
  body.push_back(1);
  body.push_back(0);
  appendBe(body, extensions.size(), 2);
  body.insert(body.end(), extensions.begin(), extensions.end());
  Bytes message{0x01};
  appendBe(message, body.size(), 3);
  return concat({message, body});
}

struct Initial {
  uint32_t version = kQuicVersion1;
  Bytes dcid = {0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08};  // RFC 9001 A.1
  Bytes scid;
  Bytes token;
  uint64_t packet_number = 0;
  size_t pn_length = 1;
  uint8_t reserved = 0;  // the two reserved bits
  Bytes frames;
  size_t pad_to = 0;  // PADDING appended so the packet is this long
};

inline uint8_t initialTypeBits(uint32_t version) {
  return version == kQuicVersion2 ? 0x10 : 0x00;
}

// The header through the length field (2 bytes, as RFC 9001's examples), for `payload`
// bytes after it (packet number, frames, tag).
inline Bytes longHeader(uint8_t first_byte, uint32_t version, const Bytes& dcid, const Bytes& scid,
                        const Bytes* token, size_t payload) {
  Bytes h{first_byte};
  appendBe(h, version, 4);
  h.push_back(static_cast<uint8_t>(dcid.size()));
  h.insert(h.end(), dcid.begin(), dcid.end());
  h.push_back(static_cast<uint8_t>(scid.size()));
  h.insert(h.end(), scid.begin(), scid.end());
  if (token != nullptr) {
    appendVarint(h, token->size());
    h.insert(h.end(), token->begin(), token->end());
  }
  appendBe(h, 0x4000 | payload, 2);
  return h;
}

// RFC 9001 §5: the packet as a client protects it.
inline Bytes seal(const Initial& in) {
  std::optional<InitialKeys> keys = deriveClientInitialKeys(in.version, in.dcid);
  if (!keys) return {};
  uint8_t first = static_cast<uint8_t>(0xc0 | initialTypeBits(in.version) | (in.reserved << 2) |
                                       (in.pn_length - 1));
  Bytes frames = in.frames;
  size_t plain = longHeader(first, in.version, in.dcid, in.scid, &in.token, 0).size() +
                 in.pn_length + frames.size() + 16;
  if (in.pad_to > plain) frames.resize(frames.size() + in.pad_to - plain, 0);
  Bytes packet =
      longHeader(first, in.version, in.dcid, in.scid, &in.token, in.pn_length + frames.size() + 16);
  size_t pn_offset = packet.size();
  appendBe(packet, in.packet_number, in.pn_length);
  std::array<uint8_t, 12> nonce = keys->iv;
  for (size_t i = 0; i < 8; ++i) nonce[11 - i] ^= static_cast<uint8_t>(in.packet_number >> (8 * i));
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes sealed(frames.size() + 16);
  int len = 0;
  bool ok =
      EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), nullptr, keys->key.data(), nonce.data()) &&
      EVP_EncryptUpdate(ctx, nullptr, &len, packet.data(), static_cast<int>(packet.size())) &&
      EVP_EncryptUpdate(ctx, sealed.data(), &len, frames.data(), static_cast<int>(frames.size())) &&
      EVP_EncryptFinal_ex(ctx, sealed.data() + len, &len) &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, sealed.data() + frames.size());
  packet.insert(packet.end(), sealed.begin(), sealed.end());
  uint8_t mask[32] = {};
  // A packet too short for its sample (a case under test) goes without header protection.
  if (packet.size() >= pn_offset + 4 + 16) {
    ok = ok && EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), nullptr, keys->hp.data(), nullptr) &&
         EVP_EncryptUpdate(ctx, mask, &len, packet.data() + pn_offset + 4, 16);
  }
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) return {};
  packet[0] ^= mask[0] & 0x0f;
  for (size_t i = 0; i < in.pn_length; ++i) packet[pn_offset + i] ^= mask[1 + i];
  return packet;
}

// A Handshake or 0-RTT packet: never decrypted by the front, so its payload is noise.
inline Bytes unreadPacket(LongHeader::Type type, const Bytes& dcid = Initial().dcid,
                          size_t payload = 60) {
  uint8_t bits = type == LongHeader::Type::kHandshake ? 0x20 : 0x10;
  Bytes p =
      longHeader(static_cast<uint8_t>(0xc0 | bits), kQuicVersion1, dcid, {}, nullptr, payload);
  p.insert(p.end(), payload, 0x77);
  return p;
}

}  // namespace scalws::front::test
