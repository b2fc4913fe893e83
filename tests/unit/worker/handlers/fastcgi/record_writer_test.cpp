// The FastCGI record serialiser: BEGIN_REQUEST flags, name-value lengths, 65535 splits.
#include "worker/handlers/fastcgi/record_writer.h"

#include <gtest/gtest.h>

#include <string>

namespace scalws::worker::fastcgi {
namespace {

RecordHeader headerAt(const std::string& s, size_t pos) {
  return decodeHeader(reinterpret_cast<const uint8_t*>(s.data() + pos));
}

TEST(RecordWriter, BeginRequestWithAndWithoutKeepConn) {
  std::string out;
  appendBeginRequest(out, true);
  ASSERT_EQ(out.size(), 16u);
  EXPECT_EQ(out.substr(0, 8), std::string("\1\1\0\1\0\x08\0\0", 8));
  EXPECT_EQ(out.substr(8), std::string("\0\1\1\0\0\0\0\0", 8));  // responder, KEEP_CONN
  out.clear();
  appendBeginRequest(out, false);
  EXPECT_EQ(out[8 + 2], '\0');
}

TEST(RecordWriter, NameValueLengths) {
  std::string out;
  appendNameValue(out, "A", "bc");
  EXPECT_EQ(out, std::string("\1\2Abc", 5));
  out.clear();
  std::string long_value(300, 'v');
  appendNameValue(out, "N", long_value);
  // 300 = 0x12c in four bytes with the high bit set.
  EXPECT_EQ(out.substr(0, 6), std::string("\x01\x80\x00\x01\x2c", 5) + "N");
  EXPECT_EQ(out.size(), 1 + 4 + 1 + 300u);
  out.clear();
  appendNameValue(out, std::string(127, 'n'), "");
  EXPECT_EQ(static_cast<unsigned char>(out[0]), 127u);  // 127 still fits one byte
  out.clear();
  appendNameValue(out, std::string(128, 'n'), "");
  EXPECT_EQ(out.substr(0, 4), std::string("\x80\x00\x00\x80", 4));
}

TEST(RecordWriter, StreamsSplitAt65535) {
  std::string content(65535 * 2 + 10, 'x');
  std::string out;
  appendStream(out, RecordType::kStdin, content);
  appendEndOfStream(out, RecordType::kStdin);
  size_t pos = 0;
  size_t total = 0;
  std::vector<uint16_t> lengths;
  while (pos < out.size()) {
    RecordHeader h = headerAt(out, pos);
    EXPECT_EQ(h.version, 1);
    EXPECT_EQ(h.type, RecordType::kStdin);
    EXPECT_EQ(h.request_id, kRequestId);
    EXPECT_EQ(h.padding_length, 0);
    lengths.push_back(h.content_length);
    total += h.content_length;
    pos += kHeaderSize + h.content_length;
  }
  EXPECT_EQ(pos, out.size());
  EXPECT_EQ(total, content.size());
  EXPECT_EQ(lengths, (std::vector<uint16_t>{65535, 65535, 10, 0}));
  out.clear();
  appendStream(out, RecordType::kParams, "");
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace scalws::worker::fastcgi
