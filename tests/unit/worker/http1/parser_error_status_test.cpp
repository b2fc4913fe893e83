#include "worker/http1/parser_error_status.h"

#include <gtest/gtest.h>

#include <string>

namespace scalws::worker::http1 {
namespace {

// The status for `line`, as if llhttp had refused the byte at `refused` and the bytes
// received so far ended after `line`.
uint16_t status(llhttp_errno_t err, const std::string& line, size_t refused) {
  return statusForParserError(err, line.data(), line.data() + refused, line.data() + line.size(),
                              {});
}

TEST(ParserErrorStatusTest, UnknownMethodWaitsForTheWholeToken) {
  // llhttp refuses "FOO" at the 'F' (no method starts with it).
  EXPECT_EQ(status(HPE_INVALID_METHOD, "F", 0), 0);
  EXPECT_EQ(status(HPE_INVALID_METHOD, "FOO", 0), 0);
  EXPECT_EQ(status(HPE_INVALID_METHOD, "FOO ", 0), 501);
  EXPECT_EQ(status(HPE_INVALID_METHOD, "\r\nFOO /", 2), 501);
  EXPECT_EQ(status(HPE_INVALID_METHOD, "G@T", 1), 400);
  EXPECT_EQ(status(HPE_INVALID_METHOD, " GET", 0), 400);
  EXPECT_EQ(status(HPE_INVALID_METHOD, std::string(32, 'X') + " ", 0), 501);
  // Past kMaxMethodLength the line is junk, whether or not the token has ended.
  EXPECT_EQ(status(HPE_INVALID_METHOD, std::string(33, 'X'), 0), 400);
  EXPECT_EQ(status(HPE_INVALID_METHOD, "GET" + std::string(40, 'T') + " /", 3), 400);
}

TEST(ParserErrorStatusTest, VersionMustBeDigitDotDigit) {
  const std::string line = "GET / HTTP/";
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "3", 11), 0);  // undecided
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "3.", 11), 0);
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "3.0", 11), 0);
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "3.0\r", 11), 505);
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "0.9\r\n", 13), 505);
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "01.1\r\n", 12), 400);
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "1.3\r\n", 13), 400);
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "1.1x", 14), 400);
  EXPECT_EQ(status(HPE_INVALID_VERSION, line + "x.1", 11), 400);
  EXPECT_EQ(status(HPE_INVALID_VERSION, "GET / HTTPS/1.1", 10), 400);
}

TEST(ParserErrorStatusTest, TransferCodings) {
  const HeaderField chunked[] = {{"Transfer-Encoding", "chunked"}};
  const HeaderField gzip_chunked[] = {{"Transfer-Encoding", "gzip"},
                                      {"transfer-encoding", " chunked "}};
  const HeaderField chunked_gzip[] = {{"Transfer-Encoding", "chunked, gzip"}};
  const HeaderField twice[] = {{"Transfer-Encoding", "chunked, chunked"}};
  EXPECT_EQ(classifyTransferEncoding(chunked), TransferCodings::kChunkedOnly);
  EXPECT_EQ(classifyTransferEncoding(gzip_chunked), TransferCodings::kChunkedLastWithOthers);
  EXPECT_EQ(classifyTransferEncoding(chunked_gzip), TransferCodings::kChunkedNotLast);
  EXPECT_EQ(classifyTransferEncoding(twice), TransferCodings::kChunkedNotLast);
  std::string line = "POST / HTTP/1.1\r\n";
  EXPECT_EQ(statusForParserError(HPE_INVALID_TRANSFER_ENCODING, line.data(), line.data() + 5,
                                 line.data() + line.size(), gzip_chunked),
            501);
  EXPECT_EQ(statusForParserError(HPE_INVALID_TRANSFER_ENCODING, line.data(), line.data() + 5,
                                 line.data() + line.size(), chunked_gzip),
            400);
}

}  // namespace
}  // namespace scalws::worker::http1
