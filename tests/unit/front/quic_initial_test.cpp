// quic_initial: the RFC 9001 and RFC 9369 client Initials, ClientHellos split across
// packets and datagrams in and out of order, coalesced packets, and what is refused. The
// packets besides the RFCs' are protected here by a small encoder checked against RFC 9001
// Appendix A.2 byte for byte.
#include "front/quic_initial.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/hex.h"
#include "tests/unit/front/quic_test_client.h"

namespace scalws::front {
namespace {

using namespace test;  // the test client (quic_test_client.h)
using DatagramOutcome = InitialDatagram::Outcome;
using HelloOutcome = ServerNamePeek::Outcome;

Bytes unhex(std::string_view hex) {
  std::optional<std::string> bytes = common::fromHex(hex);
  EXPECT_TRUE(bytes.has_value()) << hex;
  std::string s = bytes.value_or("");
  return Bytes(s.begin(), s.end());
}

Bytes bytesOf(std::string_view s) {
  return Bytes(s.begin(), s.end());
}

std::string hexOf(std::span<const uint8_t> b) {
  return common::toHex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

const Bytes kRfcDcid = unhex("8394c8f03e515708");

// RFC 9001 Appendix A.2: the client's CRYPTO frame (a ClientHello for example.com), which
// RFC 9369 Appendix A.2 protects again with the v2 keys.
const Bytes kRfcCryptoFrame = unhex(
    "060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868"
    "04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578"
    "616d706c652e636f6dff01000100000a00080006001d00170018001000070005"
    "04616c706e000500050100000000003300260024001d00209370b2c9caa47fba"
    "baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400"
    "0d0010000e0403050306030203080408050806002d00020101001c0002400100"
    "3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000"
    "75300901100f088394c8f03e51570806048000ffff");

// RFC 9001 Appendix A.2: the whole protected packet (1200 bytes, packet number 2).
const Bytes kRfc9001Initial = unhex(
    "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
    "d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399"
    "1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c"
    "8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212"
    "30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5"
    "457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208"
    "4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec"
    "4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3"
    "485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db"
    "059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c"
    "7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8"
    "9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556"
    "be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74"
    "68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a"
    "c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00"
    "f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632"
    "291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964"
    "25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd"
    "14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff"
    "ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198"
    "e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd"
    "c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73"
    "203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f"
    "cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e"
    "fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade"
    "a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047"
    "90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2"
    "162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4"
    "40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0"
    "6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e"
    "8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0"
    "be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400"
    "54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab"
    "760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9"
    "f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4"
    "056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064"
    "7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241"
    "e221af44860018ab0856972e194cd934");

// RFC 9369 Appendix A.2: the same ClientHello in a QUIC v2 Initial.
const Bytes kRfc9369Initial = unhex(
    "d76b3343cf088394c8f03e5157080000449ea0c95e82ffe67b6abcdb4298b485"
    "dd04de806071bf03dceebfa162e75d6c96058bdbfb127cdfcbf903388e99ad04"
    "9f9a3dd4425ae4d0992cfff18ecf0fdb5a842d09747052f17ac2053d21f57c5d"
    "250f2c4f0e0202b70785b7946e992e58a59ac52dea6774d4f03b55545243cf1a"
    "12834e3f249a78d395e0d18f4d766004f1a2674802a747eaa901c3f10cda5500"
    "cb9122faa9f1df66c392079a1b40f0de1c6054196a11cbea40afb6ef5253cd68"
    "18f6625efce3b6def6ba7e4b37a40f7732e093daa7d52190935b8da58976ff33"
    "12ae50b187c1433c0f028edcc4c2838b6a9bfc226ca4b4530e7a4ccee1bfa2a3"
    "d396ae5a3fb512384b2fdd851f784a65e03f2c4fbe11a53c7777c023462239dd"
    "6f7521a3f6c7d5dd3ec9b3f233773d4b46d23cc375eb198c63301c21801f6520"
    "bcfb7966fc49b393f0061d974a2706df8c4a9449f11d7f3d2dcbb90c6b877045"
    "636e7c0c0fe4eb0f697545460c806910d2c355f1d253bc9d2452aaa549e27a1f"
    "ac7cf4ed77f322e8fa894b6a83810a34b361901751a6f5eb65a0326e07de7c12"
    "16ccce2d0193f958bb3850a833f7ae432b65bc5a53975c155aa4bcb4f7b2c4e5"
    "4df16efaf6ddea94e2c50b4cd1dfe06017e0e9d02900cffe1935e0491d77ffb4"
    "fdf85290fdd893d577b1131a610ef6a5c32b2ee0293617a37cbb08b847741c3b"
    "8017c25ca9052ca1079d8b78aebd47876d330a30f6a8c6d61dd1ab5589329de7"
    "14d19d61370f8149748c72f132f0fc99f34d766c6938597040d8f9e2bb522ff9"
    "9c63a344d6a2ae8aa8e51b7b90a4a806105fcbca31506c446151adfeceb51b91"
    "abfe43960977c87471cf9ad4074d30e10d6a7f03c63bd5d4317f68ff325ba3bd"
    "80bf4dc8b52a0ba031758022eb025cdd770b44d6d6cf0670f4e990b22347a7db"
    "848265e3e5eb72dfe8299ad7481a408322cac55786e52f633b2fb6b614eaed18"
    "d703dd84045a274ae8bfa73379661388d6991fe39b0d93debb41700b41f90a15"
    "c4d526250235ddcd6776fc77bc97e7a417ebcb31600d01e57f32162a8560cacc"
    "7e27a096d37a1a86952ec71bd89a3e9a30a2a26162984d7740f81193e8238e61"
    "f6b5b984d4d3dfa033c1bb7e4f0037febf406d91c0dccf32acf423cfa1e70710"
    "10d3f270121b493ce85054ef58bada42310138fe081adb04e2bd901f2f13458b"
    "3d6758158197107c14ebb193230cd1157380aa79cae1374a7c1e5bbcb80ee23e"
    "06ebfde206bfb0fcbc0edc4ebec309661bdd908d532eb0c6adc38b7ca7331dce"
    "8dfce39ab71e7c32d318d136b6100671a1ae6a6600e3899f31f0eed19e3417d1"
    "34b90c9058f8632c798d4490da4987307cba922d61c39805d072b589bd52fdf1"
    "e86215c2d54e6670e07383a27bbffb5addf47d66aa85a0c6f9f32e59d85a44dd"
    "5d3b22dc2be80919b490437ae4f36a0ae55edf1d0b5cb4e9a3ecabee93dfc6e3"
    "8d209d0fa6536d27a5d6fbb17641cde27525d61093f1b28072d111b2b4ae5f89"
    "d5974ee12e5cf7d5da4d6a31123041f33e61407e76cffcdcfd7e19ba58cf4b53"
    "6f4c4938ae79324dc402894b44faf8afbab35282ab659d13c93f70412e85cb19"
    "9a37ddec600545473cfb5a05e08d0b209973b2172b4d21fb69745a262ccde96b"
    "a18b2faa745b6fe189cf772a9f84cbfc");

InitialDatagram decode(const Bytes& datagram, std::array<uint8_t, kMaxQuicDatagram>& scratch) {
  return decodeInitialDatagram(datagram, scratch);
}

std::string refusal(const Bytes& datagram) {
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  InitialDatagram d = decode(datagram, scratch);
  EXPECT_EQ(d.outcome, DatagramOutcome::kInvalid) << d.error;
  EXPECT_EQ(d.fragment_count, 0u);
  return std::string(d.error);
}

// ---- The RFCs' vectors. ----

TEST(QuicInitial, Rfc9001ClientKeys) {
  std::optional<InitialKeys> keys = deriveClientInitialKeys(kQuicVersion1, kRfcDcid);
  ASSERT_TRUE(keys.has_value());
  EXPECT_EQ(hexOf(keys->key), "1f369613dd76d5467730efcbe3b1a22d");
  EXPECT_EQ(hexOf(keys->iv), "fa044b2f42a3fd3b46fb255c");
  EXPECT_EQ(hexOf(keys->hp), "9f50449e04a0e810283a1e9933adedd2");
  EXPECT_FALSE(deriveClientInitialKeys(0xff00001d, kRfcDcid).has_value());  // draft 29
}

TEST(QuicInitial, Rfc9369ClientKeys) {
  std::optional<InitialKeys> keys = deriveClientInitialKeys(kQuicVersion2, kRfcDcid);
  ASSERT_TRUE(keys.has_value());
  EXPECT_EQ(hexOf(keys->key), "8b1a0bc121284290a29e0971b5cd045d");
  EXPECT_EQ(hexOf(keys->iv), "91f73e2351d8fa91660e909f");
  EXPECT_EQ(hexOf(keys->hp), "45b95e15235d6f45a6b19cbcb0294ba9");
}

TEST(QuicInitial, TheTestEncoderProtectsAsRfc9001Does) {
  Initial in;
  in.packet_number = 2;
  in.pn_length = 4;
  in.frames = kRfcCryptoFrame;
  in.pad_to = kRfc9001Initial.size();
  EXPECT_EQ(hexOf(seal(in)), hexOf(kRfc9001Initial));
}

void expectRfcClientInitial(const Bytes& packet, uint32_t version) {
  ASSERT_EQ(packet.size(), 1200u);
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  InitialDatagram d = decode(packet, scratch);
  ASSERT_EQ(d.outcome, DatagramOutcome::kInitial) << d.error;
  EXPECT_EQ(d.error, "");
  EXPECT_EQ(d.version, version);
  EXPECT_EQ(hexOf(d.dcid), "8394c8f03e515708");
  EXPECT_TRUE(d.scid.empty());
  EXPECT_TRUE(d.token.empty());
  EXPECT_EQ(d.initial_packets, 1u);
  ASSERT_EQ(d.crypto().size(), 1u);
  EXPECT_EQ(d.crypto()[0].offset, 0u);
  // The frame's data: the 241-byte ClientHello after type, offset and a 2-byte length.
  EXPECT_EQ(hexOf(d.crypto()[0].data), hexOf(std::span(kRfcCryptoFrame).subspan(4)));
  EXPECT_EQ(d.crypto()[0].data.data(), scratch.data() + 18 + 4 + 4);  // into the scratch

  InitialReassembly state;
  QuicInitialPeek peek = peekQuicInitial(packet, state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kInitial);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kName);
  EXPECT_EQ(peek.hello.name, "example.com");
  EXPECT_EQ(peek.error, "");
  EXPECT_EQ(state.version(), version);
  EXPECT_EQ(hexOf(state.dcid().view()), "8394c8f03e515708");
  EXPECT_EQ(state.contiguous(), 241u);
}

TEST(QuicInitial, Rfc9001ClientInitialNamesExampleCom) {
  expectRfcClientInitial(kRfc9001Initial, kQuicVersion1);
}

TEST(QuicInitial, Rfc9369ClientInitialNamesExampleCom) {
  expectRfcClientInitial(kRfc9369Initial, kQuicVersion2);
}

TEST(QuicInitial, TheDatagramIsNotWrittenTo) {
  Bytes copy = kRfc9001Initial;
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  ASSERT_EQ(decode(copy, scratch).outcome, DatagramOutcome::kInitial);
  EXPECT_EQ(copy, kRfc9001Initial);
  EXPECT_EQ(scratch[0], 0xc3);  // the header, unprotected, in the scratch buffer
}

// ---- The long header, without decryption. ----

bool readLongHeaderOk(std::span<const uint8_t> datagram) {
  return readLongHeader(datagram).has_value();
}

TEST(QuicInitial, LongHeaderInvariants) {
  std::optional<LongHeader> h = readLongHeader(kRfc9001Initial);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->version, kQuicVersion1);
  EXPECT_EQ(h->type, LongHeader::Type::kInitial);
  EXPECT_EQ(hexOf(h->dcid), "8394c8f03e515708");
  EXPECT_EQ(h->dcid.data(), kRfc9001Initial.data() + 6);
  EXPECT_TRUE(h->scid.empty());

  h = readLongHeader(kRfc9369Initial);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->version, kQuicVersion2);
  EXPECT_EQ(h->type, LongHeader::Type::kInitial);  // v2 numbers its types 01 for Initial

  h = readLongHeader(unreadPacket(LongHeader::Type::kHandshake));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->type, LongHeader::Type::kHandshake);
  h = readLongHeader(unreadPacket(LongHeader::Type::kZeroRtt));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->type, LongHeader::Type::kZeroRtt);

  // Another version: only the invariants, whose IDs may be up to 255 bytes.
  Bytes other = longHeader(0xc0, 0x0a0b0c0d, Bytes(40, 1), Bytes(3, 2), nullptr, 0);
  h = readLongHeader(other);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->version, 0x0a0b0c0du);
  EXPECT_EQ(h->type, LongHeader::Type::kUnknownVersion);
  EXPECT_EQ(h->dcid.size(), 40u);
  EXPECT_EQ(h->scid.size(), 3u);

  EXPECT_FALSE(readLongHeaderOk(longHeader(0xc0, kQuicVersion1, Bytes(21, 1), {}, nullptr, 0)));
  EXPECT_FALSE(readLongHeaderOk(longHeader(0xc0, kQuicVersion1, {}, Bytes(21, 1), nullptr, 0)));
  EXPECT_FALSE(readLongHeaderOk(Bytes{0x40, 1, 2, 3, 4, 5, 6, 7, 8}));  // a short header
  EXPECT_FALSE(readLongHeaderOk(Bytes{}));
  EXPECT_FALSE(readLongHeaderOk(std::span(kRfc9001Initial).first(13)));  // the DCID is cut
  EXPECT_TRUE(readLongHeaderOk(std::span(kRfc9001Initial).first(15)));   // through the SCID
}

// ---- ClientHellos across packets and datagrams. ----

// A ClientHello of ~1.8 KB whose name comes after 1,500 bytes, split in two Initials.
struct SplitHello {
  Bytes hello = quicClientHello("second.example", 1500);
  size_t cut = 1000;
  // The halves as packets; unpadded ones fit two in a datagram.
  Initial firstPacket(size_t pad_to = 1200) const {
    Initial in;
    in.frames = cryptoFrame(0, std::span(hello).first(cut));
    in.pad_to = pad_to;
    return in;
  }
  Initial secondPacket(size_t pad_to = 1200) const {
    Initial in;
    in.packet_number = 1;
    in.pn_length = 2;
    in.frames = cryptoFrame(cut, std::span(hello).subspan(cut));
    in.pad_to = pad_to;
    return in;
  }
  Bytes first() const { return seal(firstPacket()); }
  Bytes second() const { return seal(secondPacket()); }
};

TEST(QuicInitial, AHelloSplitAcrossTwoDatagramsInOrder) {
  SplitHello split;
  ASSERT_GT(split.hello.size(), 1500u);
  InitialReassembly state;
  QuicInitialPeek peek = peekQuicInitial(split.first(), state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kInitial);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(state.contiguous(), 1000u);
  peek = peekQuicInitial(split.second(), state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kInitial);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kName);
  EXPECT_EQ(peek.hello.name, "second.example");
  EXPECT_EQ(state.contiguous(), split.hello.size());
}

TEST(QuicInitial, AHelloSplitAcrossTwoDatagramsOutOfOrder) {
  SplitHello split;
  InitialReassembly state;
  QuicInitialPeek peek = peekQuicInitial(split.second(), state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kInitial);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(state.contiguous(), 0u);
  peek = peekQuicInitial(split.first(), state);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kName);
  EXPECT_EQ(peek.hello.name, "second.example");
  // Decided: a repeat changes nothing.
  peek = peekQuicInitial(split.second(), state);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kName);
  EXPECT_EQ(peek.hello.name, "second.example");
}

TEST(QuicInitial, TwoInitialsCoalescedInOneDatagram) {
  SplitHello split;
  split.cut = 300;
  Initial a = split.firstPacket(0);
  Initial b = split.secondPacket(0);
  Bytes datagram = concat({seal(a), seal(b)});
  ASSERT_GE(datagram.size(), 1200u);
  ASSERT_LE(datagram.size(), kMaxQuicDatagram);
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  InitialDatagram d = decode(datagram, scratch);
  ASSERT_EQ(d.outcome, DatagramOutcome::kInitial) << d.error;
  EXPECT_EQ(d.initial_packets, 2u);
  ASSERT_EQ(d.crypto().size(), 2u);
  EXPECT_EQ(d.crypto()[1].offset, 300u);
  InitialReassembly state;
  EXPECT_EQ(peekQuicInitial(datagram, state).hello.name, "second.example");
}

// Chrome's "chaos protection": the hello in several CRYPTO frames out of order, with PING
// and PADDING between them, and an ACK of the server's first Initial.
TEST(QuicInitial, ShuffledCryptoFramesInOnePacket) {
  Bytes hello = quicClientHello("chaos.example", 300);
  std::span<const uint8_t> h(hello);
  Initial in;
  in.frames = concat({Bytes{0x01}, cryptoFrame(200, h.subspan(200)), Bytes(7, 0x00),
                      Bytes{0x02, 0x00, 0x00, 0x01, 0x00, 0x05, 0x00},        // ACK, 1 range
                      Bytes{0x03, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03},  // ACK + ECN
                      cryptoFrame(90, h.subspan(90, 110)), Bytes{0x01},
                      cryptoFrame(0, h.first(100))});  // overlaps the one at 90, agreeing
  in.pad_to = 1200;
  InitialReassembly state;
  QuicInitialPeek peek = peekQuicInitial(seal(in), state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kInitial) << peek.error;
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kName);
  EXPECT_EQ(peek.hello.name, "chaos.example");
}

TEST(QuicInitial, InitialThenHandshakeCoalesced) {
  Initial in;
  in.frames = cryptoFrame(0, quicClientHello("a.example"));
  in.pad_to = 1100;
  Bytes datagram = concat({seal(in), unreadPacket(LongHeader::Type::kHandshake, kRfcDcid, 120)});
  ASSERT_GE(datagram.size(), 1200u);
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  InitialDatagram d = decode(datagram, scratch);
  EXPECT_EQ(d.outcome, DatagramOutcome::kInitial) << d.error;
  EXPECT_EQ(d.initial_packets, 1u);
  EXPECT_EQ(d.crypto().size(), 1u);
  InitialReassembly state;
  EXPECT_EQ(peekQuicInitial(datagram, state).hello.name, "a.example");

  // §12.2: a 0-RTT first, and a packet of another DCID after (ignored, then the walk ends).
  Bytes other_dcid =
      concat({unreadPacket(LongHeader::Type::kZeroRtt), seal(in),
              unreadPacket(LongHeader::Type::kHandshake, Bytes(8, 9)), Bytes{0xc0, 0, 0}});
  d = decode(other_dcid, scratch);
  EXPECT_EQ(d.outcome, DatagramOutcome::kInitial) << d.error;
  EXPECT_EQ(d.initial_packets, 1u);
}

TEST(QuicInitial, DatagramsWithoutAnInitial) {
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  Bytes short_header{0x41, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  InitialDatagram d = decode(short_header, scratch);
  EXPECT_EQ(d.outcome, DatagramOutcome::kNotInitial);
  EXPECT_EQ(d.error, "a short header");
  d = decode(concat({unreadPacket(LongHeader::Type::kHandshake),
                     unreadPacket(LongHeader::Type::kZeroRtt)}),
             scratch);
  EXPECT_EQ(d.outcome, DatagramOutcome::kNotInitial);
  EXPECT_EQ(d.error, "no Initial packet");
  // An Initial and a short header after it: the short header ends the walk.
  Initial in;
  in.frames = cryptoFrame(0, quicClientHello("a.example"));
  in.pad_to = 1150;
  d = decode(concat({seal(in), Bytes(60, 0x40)}), scratch);
  EXPECT_EQ(d.outcome, DatagramOutcome::kInitial);
  EXPECT_EQ(d.initial_packets, 1u);

  // The state is untouched by a datagram that holds no Initial.
  InitialReassembly state;
  QuicInitialPeek peek = peekQuicInitial(short_header, state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kNotInitial);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(state.version(), 0u);
}

TEST(QuicInitial, TheTokenAndSourceIdAreReturned) {
  Initial in;
  in.token = bytesOf("retry-token");
  in.scid = Bytes{0xaa, 0xbb, 0xcc};
  in.frames = cryptoFrame(0, quicClientHello("a.example"));
  in.pad_to = 1200;
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  InitialDatagram d = decode(seal(in), scratch);
  ASSERT_EQ(d.outcome, DatagramOutcome::kInitial) << d.error;
  EXPECT_EQ(std::string(d.token.begin(), d.token.end()), "retry-token");
  EXPECT_EQ(hexOf(d.scid), "aabbcc");
}

TEST(QuicInitial, NoServerName) {
  Initial in;
  in.frames = cryptoFrame(0, quicClientHello("", 20));
  in.pad_to = 1200;
  InitialReassembly state;
  EXPECT_EQ(peekQuicInitial(seal(in), state).hello.outcome, HelloOutcome::kNoName);
}

// ---- What is refused. ----

TEST(QuicInitial, TruncatedDatagrams) {
  EXPECT_EQ(refusal(Bytes(kRfc9001Initial.begin(), kRfc9001Initial.end() - 1)),
            "a packet length past the datagram");
  EXPECT_EQ(refusal(Bytes(kRfc9001Initial.begin(), kRfc9001Initial.begin() + 10)),
            "a truncated long header");
  EXPECT_EQ(refusal(Bytes(kRfc9001Initial.begin(), kRfc9001Initial.begin() + 17)),
            "a truncated long header");  // the length field is cut
  EXPECT_EQ(refusal(Bytes{}), "an empty datagram");
}

TEST(QuicInitial, WrongVersion) {
  Bytes other = kRfc9001Initial;
  other[4] = 2;
  EXPECT_EQ(refusal(other), "an unsupported QUIC version");
  // Draft 29 (0xff00001d) is not read either: its keys differ.
  other[1] = 0xff;
  other[4] = 0x1d;
  EXPECT_EQ(refusal(other), "an unsupported QUIC version");
}

TEST(QuicInitial, ConnectionIdLengths) {
  Initial in;
  in.frames = cryptoFrame(0, quicClientHello("a.example"));
  in.pad_to = 1200;
  in.dcid = Bytes(21, 7);
  // seal() derives keys from any DCID; the front refuses it before decrypting.
  EXPECT_EQ(refusal(seal(in)), "a connection ID over 20 bytes");
  in.dcid = Bytes(20, 7);
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  EXPECT_EQ(decode(seal(in), scratch).outcome, DatagramOutcome::kInitial);
  in.dcid = Bytes(7, 7);
  EXPECT_EQ(refusal(seal(in)), "an Initial DCID under 8 bytes");
  in.dcid = kRfcDcid;
  in.scid = Bytes(21, 7);
  EXPECT_EQ(refusal(seal(in)), "a connection ID over 20 bytes");
}

TEST(QuicInitial, AFlippedCiphertextByteFailsAuthentication) {
  Bytes flipped = kRfc9001Initial;
  flipped[600] ^= 0x10;
  EXPECT_EQ(refusal(flipped), "an Initial that fails authentication");
  // The connection's state stays as it was: still waiting, bound to nothing.
  InitialReassembly state;
  QuicInitialPeek peek = peekQuicInitial(flipped, state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kInvalid);
  EXPECT_EQ(peek.error, "an Initial that fails authentication");
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(state.version(), 0u);
  EXPECT_EQ(peekQuicInitial(kRfc9001Initial, state).hello.name, "example.com");
}

TEST(QuicInitial, ABadPacketBesideAGoodOneIsDroppedAlone) {
  SplitHello split;
  split.cut = 300;
  Initial a = split.firstPacket(0);
  Initial b = split.secondPacket(0);
  Bytes bad = seal(a);
  bad[bad.size() - 1] ^= 1;  // the tag
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  InitialDatagram d = decode(concat({bad, seal(b)}), scratch);
  ASSERT_EQ(d.outcome, DatagramOutcome::kInitial) << d.error;
  EXPECT_EQ(d.initial_packets, 1u);
  ASSERT_EQ(d.crypto().size(), 1u);
  EXPECT_EQ(d.crypto()[0].offset, 300u);

  // A CONNECTION_CLOSE gives up its packet, CRYPTO frames before it included.
  Initial closing = a;
  closing.frames = concat({a.frames, Bytes{0x1c, 0x0a, 0x00, 0x00}});
  closing.pad_to = 1200;
  EXPECT_EQ(refusal(seal(closing)), "the client closes the connection");
  closing.pad_to = 0;
  d = decode(concat({seal(closing), seal(b)}), scratch);
  ASSERT_EQ(d.outcome, DatagramOutcome::kInitial) << d.error;
  ASSERT_EQ(d.crypto().size(), 1u);
  EXPECT_EQ(d.crypto()[0].offset, 300u);
}

TEST(QuicInitial, FramesNotAllowedInAnInitial) {
  Bytes hello = quicClientHello("a.example");
  for (Bytes frame : {Bytes{0x08, 0x00, 0x01, 'x'},      // STREAM
                      Bytes{0x1e},                       // HANDSHAKE_DONE
                      Bytes{0x1d, 0x00, 0x00},           // CONNECTION_CLOSE of the application
                      Bytes{0x40, 0x06, 0x00, 0x00}}) {  // CRYPTO's type in two bytes
    Initial in;
    in.frames = concat({cryptoFrame(0, hello), frame});
    in.pad_to = 1200;
    EXPECT_EQ(refusal(seal(in)), "a frame not allowed in an Initial") << hexOf(frame);
  }
}

TEST(QuicInitial, MalformedFrames) {
  Initial in;
  in.pad_to = 0;
  in.frames = Bytes{0x06, 0x00, 0x44, 0x00};  // CRYPTO of 1,024 bytes, none there
  Bytes packet = seal(in);
  packet.resize(1200, 0);  // the rest of the datagram: zeros, a short header, not read
  EXPECT_EQ(refusal(packet), "a truncated CRYPTO frame");
  in.frames = Bytes{0x02, 0x00, 0x00, 0x05, 0x00, 0x01};  // ACK of 5 ranges, none there
  packet = seal(in);
  packet.resize(1200, 0);
  EXPECT_EQ(refusal(packet), "a truncated ACK frame");
  in.frames = {};
  packet = seal(in);  // a 1-byte packet number and a tag: 17 bytes, no room for a sample
  packet.resize(1200, 0);
  EXPECT_EQ(refusal(packet), "an Initial too short for its header protection sample");
  in.pn_length = 4;
  packet = seal(in);
  packet.resize(1200, 0);
  EXPECT_EQ(refusal(packet), "an Initial without frames");
  in.frames = Bytes{0x01};
  in.reserved = 1;
  in.pad_to = 1200;
  EXPECT_EQ(refusal(seal(in)), "reserved bits set in an Initial");
}

TEST(QuicInitial, TooManyCryptoFrames) {
  Bytes hello = quicClientHello("a.example");
  Initial in;
  for (size_t i = 0; i <= kMaxCryptoFragments; ++i) {
    in.frames = concat({in.frames, cryptoFrame(i, std::span(hello).subspan(i, 1))});
  }
  in.pad_to = 1200;
  EXPECT_EQ(refusal(seal(in)), "too many CRYPTO frames");
  in.frames.resize(in.frames.size() - 5);  // one frame fewer (the last has a 2-byte offset)
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  EXPECT_EQ(decode(seal(in), scratch).crypto().size(), kMaxCryptoFragments);
}

TEST(QuicInitial, DatagramSizes) {
  Initial in;
  in.frames = cryptoFrame(0, quicClientHello("a.example"));
  std::array<uint8_t, kMaxQuicDatagram> scratch;
  in.pad_to = kMaxQuicDatagram;
  EXPECT_EQ(decode(seal(in), scratch).outcome, DatagramOutcome::kInitial);
  in.pad_to = kMaxQuicDatagram + 1;
  EXPECT_EQ(refusal(seal(in)), "a datagram over 2048 bytes");
  in.pad_to = 1200;
  EXPECT_EQ(decode(seal(in), scratch).outcome, DatagramOutcome::kInitial);
  in.pad_to = 1199;
  EXPECT_EQ(refusal(seal(in)), "an Initial in a datagram under 1200 bytes");
}

TEST(QuicInitial, CryptoDataPastTheBound) {
  Initial in;
  in.pad_to = 1200;
  in.frames = cryptoFrame(kMaxInitialCrypto - 1, Bytes{1, 2});
  InitialReassembly state;
  QuicInitialPeek peek = peekQuicInitial(seal(in), state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kInitial);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kInvalid);
  EXPECT_EQ(peek.error, "CRYPTO data past the ClientHello bound");
  // Up to the bound exactly is held.
  InitialReassembly at_bound;
  in.frames = cryptoFrame(kMaxInitialCrypto - 1, Bytes{1});
  EXPECT_EQ(peekQuicInitial(seal(in), at_bound).hello.outcome, HelloOutcome::kNeedMore);
  // An offset near 2^62 is refused without overflow.
  InitialReassembly far;
  EXPECT_EQ(far.add(uint64_t{1} << 61, Bytes{1}).outcome, HelloOutcome::kInvalid);
}

TEST(QuicInitial, OverlappingBytesMustAgree) {
  Bytes hello = quicClientHello("a.example", 100);
  InitialReassembly state;
  EXPECT_EQ(state.add(10, std::span(hello).subspan(10, 50)).outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(state.add(10, std::span(hello).subspan(10, 50)).outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(state.contiguous(), 0u);
  Bytes lie(hello.begin() + 40, hello.begin() + 70);
  lie[5] ^= 1;
  EXPECT_EQ(state.add(40, lie).outcome, HelloOutcome::kInvalid);
  EXPECT_EQ(state.error(), "CRYPTO bytes that disagree with earlier ones");
  // Decided for good: the true bytes do not undo it.
  EXPECT_EQ(state.add(0, hello).outcome, HelloOutcome::kInvalid);
}

TEST(QuicInitial, NotAClientHello) {
  Bytes server_hello = quicClientHello("a.example");
  server_hello[0] = 2;
  Initial in;
  in.frames = cryptoFrame(0, server_hello);
  in.pad_to = 1200;
  InitialReassembly state;
  QuicInitialPeek peek = peekQuicInitial(seal(in), state);
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kInvalid);
  EXPECT_EQ(peek.error, "not a ClientHello the front routes");
}

TEST(QuicInitial, AnotherConnectionsInitialLeavesTheStateAlone) {
  SplitHello split;
  InitialReassembly state;
  ASSERT_EQ(peekQuicInitial(split.first(), state).hello.outcome, HelloOutcome::kNeedMore);
  Initial in;
  in.dcid = Bytes(8, 0x42);
  in.frames = cryptoFrame(0, quicClientHello("other.example"));
  in.pad_to = 1200;
  QuicInitialPeek peek = peekQuicInitial(seal(in), state);
  EXPECT_EQ(peek.datagram, DatagramOutcome::kInvalid);
  EXPECT_EQ(peek.error, "another connection's Initial");
  EXPECT_EQ(peek.hello.outcome, HelloOutcome::kNeedMore);
  EXPECT_EQ(peekQuicInitial(split.second(), state).hello.name, "second.example");
}

}  // namespace
}  // namespace scalws::front
