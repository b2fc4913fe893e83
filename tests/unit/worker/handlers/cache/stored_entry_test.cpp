#include "worker/handlers/cache/stored_entry.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace scalws::worker::cache {
namespace {

std::string makeEntry(std::string_view body, bool checksum, std::string head = {}) {
  if (head.empty()) {
    appendStoredField(head, "Content-Type", "text/plain");
    appendStoredField(head, "ETag", "\"v1\"");
  }
  EntryInfo info;
  info.status = 200;
  info.freshness.response_time_ms = 1'000'000;
  info.freshness.lifetime_ms = 60'000;
  info.freshness.must_revalidate = true;
  info.key_hash = 42;
  info.body_len = body.size();
  std::string key = "http\nshop\n/a\n\n";
  std::string uri = "http://shop/a";
  std::string vary = "accept-encoding:gzip\n";
  std::string bytes(entryMetaSize(key, uri, vary, head), '\0');
  writeEntryMeta(info, key, uri, vary, head, bytes.data());
  bytes += body;
  if (checksum) {
    std::string_view parts[] = {body};
    setEntryChecksum(
        bytes.data(),
        entryChecksum(std::string_view(bytes).substr(0, bytes.size() - body.size()), parts));
  }
  return bytes;
}

TEST(StoredEntry, RoundTrip) {
  std::string bytes = makeEntry("hello", true);
  common::Result<EntryView> view = parseEntry(bytes, true);
  ASSERT_TRUE(view.ok()) << view.status().message();
  EXPECT_EQ(view->info.status, 200);
  EXPECT_EQ(view->info.key_hash, 42u);
  EXPECT_EQ(view->info.freshness.lifetime_ms, 60'000u);
  EXPECT_TRUE(view->info.freshness.must_revalidate);
  EXPECT_FALSE(view->info.freshness.no_cache);
  EXPECT_EQ(view->key, "http\nshop\n/a\n\n");
  EXPECT_EQ(view->uri, "http://shop/a");
  EXPECT_EQ(view->vary, "accept-encoding:gzip\n");
  EXPECT_EQ(view->body, "hello");
  HeaderField fields[8];
  size_t count = 0;
  ASSERT_TRUE(splitStoredHead(view->head, fields, count));
  ASSERT_EQ(count, 2u);
  EXPECT_EQ(fields[1].name, "ETag");
  EXPECT_EQ(fields[1].value, "\"v1\"");
  // The meta alone parses too (a memory entry's body lies in other blocks).
  common::Result<EntryView> meta =
      parseEntryMeta(std::string_view(bytes).substr(0, view->meta_size));
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->info.body_len, 5u);
}

TEST(StoredEntry, ChecksumIsXxh64OfTheBytes) {
  // The value libxxhash 0.8.1 gives for these bytes (checksum field zero, seed "SWC1"), as
  // tests/fuzz/stored_entry/make_corpus.py computes it: files written by one build are
  // read by the next.
  common::Result<EntryView> view = parseEntry(makeEntry("hello", true), true);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->info.checksum, 0x25b2309e0d20cc86ull);
}

TEST(StoredEntry, EmptyBodyAndHead) {
  std::string bytes = makeEntry("", true, "X: y\r\n");
  ASSERT_TRUE(parseEntry(bytes, true).ok());
}

TEST(StoredEntry, CorruptionIsRefused) {
  std::string good = makeEntry("hello world", true);
  ASSERT_TRUE(parseEntry(good, true).ok());
  // Truncated anywhere.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(parseEntry(std::string_view(good).substr(0, n), false).ok()) << n;
  }
  EXPECT_FALSE(parseEntry(good + "x", false).ok());  // bytes after the body
  // Any flipped bit fails the checksum (or an earlier check).
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    EXPECT_FALSE(parseEntry(bad, true).ok()) << i;
  }
  // Without a checksum, a disk file is refused when one is asked for.
  EXPECT_FALSE(parseEntry(makeEntry("x", false), true).ok());
  EXPECT_TRUE(parseEntry(makeEntry("x", false), false).ok());
}

TEST(StoredEntry, MalformedHeadsAreRefused) {
  HeaderField fields[4];
  size_t count = 0;
  EXPECT_FALSE(splitStoredHead("A: b", fields, count));         // no CRLF
  EXPECT_FALSE(splitStoredHead(": b\r\n", fields, count));      // no name
  EXPECT_FALSE(splitStoredHead("A b: c\r\n", fields, count));   // not a token
  EXPECT_FALSE(splitStoredHead("A:b\r\n", fields, count));      // no ": "
  EXPECT_FALSE(splitStoredHead("A: b\rc\r\n", fields, count));  // CR inside
  EXPECT_FALSE(splitStoredHead(std::string_view("A: b\0\r\n", 7), fields, count));
  EXPECT_FALSE(splitStoredHead("A: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\n", fields, count));
  EXPECT_TRUE(splitStoredHead("A: \r\n", fields, count));  // an empty value
  EXPECT_TRUE(splitStoredHead("", fields, count));
  EXPECT_EQ(count, 0u);
}

TEST(StoredEntry, HeaderFieldsOutOfRangeAreRefused) {
  std::string good = makeEntry("abc", false);
  auto patched = [&](size_t offset, uint32_t value) {
    std::string bad = good;
    std::memcpy(bad.data() + offset, &value, sizeof(value));
    return parseEntry(bad, false).ok();
  };
  EXPECT_FALSE(patched(0, 0x12345678));  // magic
  EXPECT_FALSE(patched(12, 0));          // key length 0
  EXPECT_FALSE(patched(12, 1u << 30));   // key length huge
  EXPECT_FALSE(patched(24, kMaxHeadBytes + 1));
  EXPECT_FALSE(patched(32, 4));   // body length off by one
  EXPECT_FALSE(patched(8, 99));   // status 99 (with flags 0)
  EXPECT_FALSE(patched(100, 1));  // reserved bytes
}

}  // namespace
}  // namespace scalws::worker::cache
