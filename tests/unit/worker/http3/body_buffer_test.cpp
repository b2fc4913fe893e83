#include "worker/http3/body_buffer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "tests/unit/worker/tls/test_tls.h"

namespace scalws::worker::http3 {
namespace {

std::string joined(const nghttp3_vec* v, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out.append(reinterpret_cast<const char*>(v[i].base), v[i].len);
  return out;
}

struct CountingOwner : RefCounted {
  int released = 0;
  void onLastRelease() noexcept override { ++released; }
};

TEST(BodyBuffer, BytesStayUntilAcknowledgedInOrder) {
  BufferPool pool;
  BodyBuffer body(pool);
  body.append("hello ");
  std::string stable = "stable world, referenced not copied, long enough to matter";
  body.appendStable(stable);
  nghttp3_vec v[16];
  size_t n = body.take(v, 16);
  EXPECT_EQ(joined(v, n), "hello " + stable);
  EXPECT_EQ(v[1].base, reinterpret_cast<const uint8_t*>(stable.data()));
  EXPECT_EQ(body.unsent(), 0u);
  EXPECT_EQ(body.held(), 6 + stable.size());
  EXPECT_EQ(body.take(v, 16), 0u);  // nothing new
  body.append("!");
  n = body.take(v, 16);
  EXPECT_EQ(joined(v, n), "!");
  body.acknowledge(3);
  EXPECT_EQ(body.held(), 4 + stable.size());
  body.acknowledge(4 + stable.size());
  EXPECT_EQ(body.held(), 0u);
}

TEST(BodyBuffer, LargeCopiesSpanPooledBlocks) {
  BufferPool pool;
  BodyBuffer body(pool);
  std::string big(BufferPool::kBlockSize * 2 + 100, 'x');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  body.append(big);
  nghttp3_vec v[16];
  size_t n = body.take(v, 16);
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(joined(v, n), big);
  body.acknowledge(big.size());
  EXPECT_EQ(body.held(), 0u);
  EXPECT_GE(pool.freeCountForTest(), 2u);  // blocks went back once acknowledged
}

TEST(BodyBuffer, FilesAreReadABlockAtATime) {
  tls::testing::TempDir dir;
  std::string content(BufferPool::kBlockSize + 5000, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 31);
  dir.write("f", content);
  int fd = ::open(dir.file("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  BufferPool pool;
  CountingOwner owner;  // one reference: ours
  {
    BodyBuffer body(pool);
    body.append("head:");
    body.appendFile(FileSlice{fd, 10, content.size() - 10, &owner});
    nghttp3_vec v[16];
    size_t n = body.take(v, 16);  // the copied bytes, then one block of the file
    std::string got = joined(v, n);
    EXPECT_EQ(got.size(), 5 + BufferPool::kBlockSize);
    n = body.take(v, 16);  // the rest of the file
    got += joined(v, n);
    EXPECT_EQ(got, "head:" + content.substr(10));
    EXPECT_EQ(body.take(v, 16), 0u);
    EXPECT_EQ(owner.refCountForTest(), 1u);  // read to the end: the buffer let go
    body.acknowledge(got.size());
    EXPECT_EQ(body.held(), 0u);
  }
  owner.release();
  EXPECT_EQ(owner.released, 1);
  ::close(fd);
}

TEST(BodyBuffer, AFileThatShrankFails) {
  tls::testing::TempDir dir;
  dir.write("f", "short");
  int fd = ::open(dir.file("f").c_str(), O_RDONLY);
  BufferPool pool;
  BodyBuffer body(pool);
  body.appendFile(FileSlice{fd, 0, 100000, nullptr});
  nghttp3_vec v[16];
  size_t n = body.take(v, 16);
  EXPECT_EQ(joined(v, n), "short");
  EXPECT_EQ(body.take(v, 16), 0u);
  EXPECT_TRUE(body.failed());
  ::close(fd);
}

}  // namespace
}  // namespace scalws::worker::http3
