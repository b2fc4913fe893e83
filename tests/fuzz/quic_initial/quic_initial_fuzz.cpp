// Fuzzes the front's QUIC Initial reader (front/quic_initial.h): the long header, Initial
// decryption, the frame walk and the ClientHello reassembly across datagrams.
//
// Input: records of [flags][length: 2 bytes][bytes], each one datagram of one connection, fed
// in order to one InitialReassembly. With flags bit 7 the bytes are the plaintext frames of
// an Initial this target protects itself (DCID 8394c8f03e515708, packet number = the
// record's index, QUIC v2 when bit 0 is set, PADDING to 1200 bytes), so mutations reach
// past the AEAD; otherwise they are the datagram as received.
//
// Checked: a datagram decodes the same twice; a decoded Initial agrees with readLongHeader
// and its CRYPTO data lies in the scratch buffer; a datagram that is not kInitial leaves
// the state alone; once the connection's answer is decided it never changes, and a name is
// a normalised host name.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/net/host_name_table.h"
#include "front/quic_initial.h"
#include "tests/unit/front/quic_test_client.h"

namespace {

using namespace scalws::front;
using test::Bytes;

constexpr uint8_t kDcid[] = {0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08};

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "quic_initial_fuzz: %s\n", what);
  std::abort();
}

// RFC 9001 §5: `frames` as the payload of a client Initial, PADDING to 1200 bytes.
Bytes protect(uint32_t version, uint32_t packet_number, std::span<const uint8_t> frames) {
  test::Initial in;
  in.version = version;
  in.dcid = Bytes(std::begin(kDcid), std::end(kDcid));
  in.packet_number = packet_number;
  in.pn_length = 4;
  in.frames = Bytes(frames.begin(), frames.end());
  in.pad_to = 1200;
  Bytes packet = test::seal(in);
  if (packet.empty()) fail("OpenSSL failed to protect");
  return packet;
}

void checkDatagram(std::span<const uint8_t> datagram) {
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  InitialDatagram d = decodeInitialDatagram(datagram, scratch);
  std::array<uint8_t, kMaxQuicDatagram> scratch2;
  InitialDatagram again = decodeInitialDatagram(datagram, scratch2);
  if (d.outcome != again.outcome || d.error != again.error ||
      d.fragment_count != again.fragment_count) {
    fail("the same datagram decoded twice differently");
  }
  if (d.outcome != InitialDatagram::Outcome::kInitial) {
    if (d.fragment_count != 0 || d.error.empty()) fail("a refusal with fragments or no reason");
    return;
  }
  std::optional<LongHeader> header = readLongHeader(datagram);
  if (!header || header->version != d.version || !std::ranges::equal(header->dcid, d.dcid)) {
    fail("a decoded Initial the long header reader disagrees with");
  }
  if (d.initial_packets == 0 || datagram.size() < 1200 || datagram.size() > kMaxQuicDatagram) {
    fail("an Initial outside the rules");
  }
  const uint8_t* end = scratch.data() + datagram.size();
  for (const CryptoFragment& f : d.crypto()) {
    if (!f.data.empty() &&
        (f.data.data() < scratch.data() || f.data.data() + f.data.size() > end)) {
      fail("CRYPTO data outside the scratch buffer");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  InitialReassembly state;
  ServerNamePeek decided;
  bool have = false;
  size_t pos = 0;
  for (uint32_t index = 0; pos + 3 <= size; ++index) {
    uint8_t flags = data[pos];
    size_t len = std::min((size_t{data[pos + 1]} << 8) | data[pos + 2], size - pos - 3);
    std::span<const uint8_t> bytes(data + pos + 3, len);
    pos += 3 + len;
    Bytes datagram;
    if ((flags & 0x80) != 0) {
      datagram = protect((flags & 1) != 0 ? kQuicVersion2 : kQuicVersion1, index, bytes);
    } else {
      datagram.assign(bytes.begin(), bytes.end());
    }
    checkDatagram(datagram);

    size_t contiguous = state.contiguous();
    uint32_t version = state.version();
    QuicInitialPeek peek = peekQuicInitial(datagram, state);
    if (peek.datagram != InitialDatagram::Outcome::kInitial &&
        (state.contiguous() != contiguous || state.version() != version)) {
      fail("a datagram that is not an Initial changed the state");
    }
    if (have && (peek.hello.outcome != decided.outcome || peek.hello.name != decided.name)) {
      fail("a decided answer changed");
    }
    if (!have && peek.hello.outcome != ServerNamePeek::Outcome::kNeedMore) {
      decided = peek.hello;
      have = true;
    }
    if (peek.hello.outcome == ServerNamePeek::Outcome::kName) {
      std::string again;
      if (!scalws::common::net::normalizeHostName(peek.hello.name, again) ||
          again != peek.hello.name) {
        fail("a name that is not normalised");
      }
    }
  }
  return 0;
}
