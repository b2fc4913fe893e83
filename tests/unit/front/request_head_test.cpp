// peekRequestHost: where the host comes from, when it is known, what is refused.
#include "front/request_head.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/chunk_feeder.h"

namespace scalws::front {
namespace {

using HeadOutcome = HostPeek::Outcome;

HostPeek feedHead(const std::string& bytes, testing::Split split) {
  size_t seen = 0;
  HostPeek last;
  std::vector<size_t> sizes = testing::chunkSizes(split, bytes.size(), 3);
  for (size_t i = 0; i < sizes.size(); ++i) {
    seen += sizes[i];
    last = peekRequestHost(std::string_view(bytes).substr(0, seen));
    if (i + 1 < sizes.size() && last.outcome != HeadOutcome::kNeedMore) {
      ADD_FAILURE() << "decided after " << seen << " of " << bytes.size();
      return last;
    }
  }
  return last;
}

TEST(RequestHead, TheHostFieldInEverySplit) {
  std::string head = "GET /a?b HTTP/1.1\r\nUser-Agent: x\r\nHost: Shop.Example:8080\r\n";
  for (testing::Split split : testing::kAllSplits) {
    HostPeek peek = feedHead(head, split);
    EXPECT_EQ(peek.outcome, HeadOutcome::kHost) << testing::splitName(split);
    EXPECT_EQ(peek.host, "shop.example");
  }
}

TEST(RequestHead, DecidedOnceTheHostLineEnds) {
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: a.example").outcome, HeadOutcome::kNeedMore);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: a.example\r").outcome, HeadOutcome::kNeedMore);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: a.example\r\n").host, "a.example");
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nhOST:\ta.example. \r\nX: y\r\n\r\n").host,
            "a.example");
}

TEST(RequestHead, AnAbsoluteFormTargetWins) {
  HostPeek peek = peekRequestHost("GET HTTP://B.example:81/x HTTP/1.1\r\n");
  EXPECT_EQ(peek.outcome, HeadOutcome::kHost);
  EXPECT_EQ(peek.host, "b.example");
  EXPECT_EQ(peekRequestHost("GET https://c.example?q HTTP/1.1\r\nHost: a.example\r\n\r\n").host,
            "c.example");
  EXPECT_EQ(peekRequestHost("GET http://u@c.example/ HTTP/1.1\r\n").outcome, HeadOutcome::kInvalid);
}

TEST(RequestHead, NoHost) {
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.0\r\nAccept: */*\r\n\r\n").outcome, HeadOutcome::kNoHost);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n").outcome,
            HeadOutcome::kNoHost);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost:\r\n").outcome, HeadOutcome::kNoHost);
  // An IPv4 literal is a host the table will not know: the default gets it.
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n").host, "127.0.0.1");
}

TEST(RequestHead, EmptyLinesBeforeTheRequestLineAreSkipped) {
  EXPECT_EQ(peekRequestHost("\r\n\r\nGET / HTTP/1.1\r\nHost: a.example\r\n").host, "a.example");
  EXPECT_EQ(peekRequestHost("\r\n").outcome, HeadOutcome::kNeedMore);
  EXPECT_EQ(peekRequestHost("\r").outcome, HeadOutcome::kNeedMore);
}

TEST(RequestHead, TheH2cPreface) {
  std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  for (testing::Split split : testing::kAllSplits) {
    EXPECT_EQ(feedHead(preface, split).outcome, HeadOutcome::kH2cPreface);
  }
  EXPECT_EQ(peekRequestHost(preface + std::string("\x00\x00\x12\x04", 4)).outcome,
            HeadOutcome::kH2cPreface);
  // A method called PRI that is not the preface is HTTP/1.1.
  EXPECT_EQ(peekRequestHost("PRI / HTTP/1.1\r\nHost: a.example\r\n").host, "a.example");
}

TEST(RequestHead, WhatIsNotHttpIsRefusedEarly) {
  EXPECT_EQ(peekRequestHost("\x16\x03\x01").outcome, HeadOutcome::kInvalid);  // a TLS hello
  EXPECT_EQ(peekRequestHost(" GET").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET  /").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTX").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1 \r\n").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/11\r\n").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET /\x01 HTTP/1.1\r\n").outcome, HeadOutcome::kInvalid);
}

TEST(RequestHead, LineEndingsMustBeCrlf) {
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\nHost: a\n").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: a\rb\r\n").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nX: 1\r\n Host: a\r\n").outcome,
            HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost : a\r\n").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: a\x7f\r\n").outcome, HeadOutcome::kInvalid);
}

TEST(RequestHead, HostValuesThatAreNotNames) {
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: a b\r\n").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: a:80x\r\n").outcome, HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: a:1234567\r\n").outcome,
            HeadOutcome::kInvalid);
  EXPECT_EQ(peekRequestHost("GET / HTTP/1.1\r\nHost: [::1\r\n").outcome, HeadOutcome::kInvalid);
}

TEST(RequestHead, NothingPastTheBoundIsLookedAt) {
  std::string head = "GET / HTTP/1.1\r\nX: " + std::string(100, 'x') + "\r\nHost: a.example\r\n";
  EXPECT_EQ(peekRequestHost(head, 64).outcome, HeadOutcome::kTooLarge);
  EXPECT_EQ(peekRequestHost(head, head.size()).host, "a.example");
  EXPECT_EQ(peekRequestHost("GET /" + std::string(200, 'a'), 64).outcome, HeadOutcome::kTooLarge);
  EXPECT_EQ(peekRequestHost("GET /" + std::string(20, 'a'), 64).outcome, HeadOutcome::kNeedMore);
}

}  // namespace
}  // namespace scalws::front
