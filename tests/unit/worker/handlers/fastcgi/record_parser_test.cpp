// The FastCGI record parser: every split of the input, padding, and malformed records.
#include "worker/handlers/fastcgi/record_parser.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/chunk_feeder.h"
#include "worker/handlers/fastcgi/record_writer.h"

namespace scalws::worker::fastcgi {
namespace {

using scalws::testing::chunkSizes;
using scalws::testing::kAllSplits;
using scalws::testing::splitName;

std::string record(RecordType type, std::string_view content, uint8_t padding = 0,
                   uint16_t id = kRequestId, uint8_t version = kVersion1) {
  RecordHeader h;
  h.version = version;
  h.type = type;
  h.request_id = id;
  h.content_length = static_cast<uint16_t>(content.size());
  h.padding_length = padding;
  uint8_t bytes[kHeaderSize];
  encodeHeader(h, bytes);
  std::string out(reinterpret_cast<const char*>(bytes), kHeaderSize);
  out.append(content);
  out.append(padding, '\xee');
  return out;
}

std::string endRequest(uint32_t app_status = 0, uint8_t protocol = 0, uint8_t padding = 0) {
  std::string body(8, '\0');
  body[0] = static_cast<char>(app_status >> 24);
  body[1] = static_cast<char>(app_status >> 16);
  body[2] = static_cast<char>(app_status >> 8);
  body[3] = static_cast<char>(app_status);
  body[4] = static_cast<char>(protocol);
  return record(RecordType::kEndRequest, body, padding);
}

struct Collector : RecordParserCallbacks {
  std::string out, err;
  int ends = 0;
  uint32_t app_status = 0;
  ProtocolStatus status = ProtocolStatus::kRequestComplete;
  void onStdout(std::string_view d) override { out.append(d); }
  void onStderr(std::string_view d) override { err.append(d); }
  void onEndRequest(uint32_t a, ProtocolStatus s) override {
    ++ends;
    app_status = a;
    status = s;
  }
};

// Feeds `input` split as asked; returns the last result and how much was consumed in all.
RecordParser::Result feed(RecordParser& p, const std::string& input, scalws::testing::Split split,
                          size_t& consumed) {
  RecordParser::Result r;
  consumed = 0;
  size_t pos = 0;
  for (size_t n : chunkSizes(split, input.size(), 7)) {
    r = p.dispatch(input.data() + pos, n);
    consumed += r.consumed;
    pos += n;
    if (r.outcome != RecordParser::Outcome::kNeedMore) break;
  }
  return r;
}

TEST(RecordParser, StdoutStderrAndEndInEverySplit) {
  std::string input = record(RecordType::kStdout, "Content-type: text/plain\r\n\r\nhel", 5) +
                      record(RecordType::kStderr, "warn\n") +
                      record(RecordType::kStdout, std::string(70000 % 65535, 'x'), 3) +
                      record(RecordType::kStdout, "") + endRequest(7, 0, 4);
  for (auto split : kAllSplits) {
    Collector c;
    RecordParser p(c);
    size_t consumed = 0;
    RecordParser::Result r = feed(p, input, split, consumed);
    EXPECT_EQ(r.outcome, RecordParser::Outcome::kEnd) << splitName(split);
    EXPECT_EQ(consumed, input.size()) << splitName(split);
    EXPECT_EQ(c.out, "Content-type: text/plain\r\n\r\nhel" + std::string(70000 % 65535, 'x'));
    EXPECT_EQ(c.err, "warn\n");
    EXPECT_EQ(c.ends, 1);
    EXPECT_EQ(c.app_status, 7u);
  }
}

TEST(RecordParser, StopsRightAfterEndRequest) {
  Collector c;
  RecordParser p(c);
  std::string input = endRequest() + "garbage";
  RecordParser::Result r = p.dispatch(input.data(), input.size());
  EXPECT_EQ(r.outcome, RecordParser::Outcome::kEnd);
  EXPECT_EQ(r.consumed, input.size() - 7);
  // Further bytes are not parsed until reset().
  EXPECT_EQ(p.dispatch("x", 1).outcome, RecordParser::Outcome::kEnd);
  p.reset();
  std::string next = record(RecordType::kStdout, "again") + endRequest();
  EXPECT_EQ(p.dispatch(next.data(), next.size()).outcome, RecordParser::Outcome::kEnd);
  EXPECT_EQ(c.out, "again");
  EXPECT_EQ(c.ends, 2);
}

TEST(RecordParser, ReportsProtocolStatus) {
  Collector c;
  RecordParser p(c);
  std::string input = endRequest(0, static_cast<uint8_t>(ProtocolStatus::kOverloaded));
  EXPECT_EQ(p.dispatch(input.data(), input.size()).outcome, RecordParser::Outcome::kEnd);
  EXPECT_EQ(c.status, ProtocolStatus::kOverloaded);
}

TEST(RecordParser, RefusesMalformedRecords) {
  struct Case {
    std::string input;
    std::string why;
  };
  std::string bad_end = record(RecordType::kEndRequest, "12345");
  Case cases[] = {
      {record(RecordType::kStdout, "x", 0, kRequestId, 2), "record version is not 1"},
      {record(RecordType::kStdout, "x", 0, 2), "record for another request id"},
      {record(RecordType::kGetValuesResult, "", 0, 0), "record for another request id"},
      {record(RecordType::kBeginRequest, "12345678"), "unexpected record type"},
      {record(RecordType::kUnknownType, "12345678"), "unexpected record type"},
      {record(static_cast<RecordType>(200), ""), "unexpected record type"},
      {bad_end, "END_REQUEST body is not 8 bytes"},
  };
  for (const Case& k : cases) {
    for (auto split : kAllSplits) {
      Collector c;
      RecordParser p(c);
      std::string input = record(RecordType::kStdout, "ok") + k.input;
      size_t consumed = 0;
      RecordParser::Result r = feed(p, input, split, consumed);
      EXPECT_EQ(r.outcome, RecordParser::Outcome::kError) << k.why << " " << splitName(split);
      EXPECT_EQ(std::string(r.error), k.why);
      EXPECT_EQ(c.out, "ok");
      // Sticky: the connection cannot be trusted any more.
      EXPECT_EQ(p.dispatch("\1", 1).outcome, RecordParser::Outcome::kError);
    }
  }
}

TEST(RecordParser, IncompleteInputNeedsMore) {
  Collector c;
  RecordParser p(c);
  std::string input = record(RecordType::kStdout, "abc", 2);
  RecordParser::Result r = p.dispatch(input.data(), input.size() - 1);
  EXPECT_EQ(r.outcome, RecordParser::Outcome::kNeedMore);
  EXPECT_EQ(c.out, "abc");
  EXPECT_EQ(c.ends, 0);
}

}  // namespace
}  // namespace scalws::worker::fastcgi
