#include "worker/tls/tls_transport.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cerrno>
#include <string>
#include <vector>

#include "tests/unit/worker/tls/test_tls.h"

namespace scalws::worker::tls {
namespace {

using testing::ClientAndServer;
using testing::makeCert;
using testing::TempDir;
using testing::tlsListen;

class TlsTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cert = makeCert(dir_, "a", "a.test", {"a.test"});
    auto context = ServerContext::build(tlsListen(cert));
    ASSERT_TRUE(context.ok()) << context.status().message();
    context_ = *context;
    pair_ = std::make_unique<ClientAndServer>(context_, pool_);
    ASSERT_EQ(pair_->handshake(), TlsTransport::Handshake::kDone);
    pair_->clientRead();  // the session ticket
  }

  // Application-data record lengths waiting on the client's socket (peeked, not taken).
  std::vector<size_t> recordsOnTheWire() {
    std::vector<char> buf(1 << 20);
    ssize_t n = recv(pair_->clientFd(), buf.data(), buf.size(), MSG_PEEK);
    std::vector<size_t> records;
    for (ssize_t pos = 0; n > 0 && pos + 5 <= n;) {
      size_t len = (static_cast<uint8_t>(buf[pos + 3]) << 8) | static_cast<uint8_t>(buf[pos + 4]);
      if (buf[pos] == 0x17) records.push_back(len);
      pos += 5 + static_cast<ssize_t>(len);
    }
    return records;
  }

  // Writes `data` through the transport as the ByteQueue would: retrying the same bytes.
  void writeAll(const std::string& data) {
    size_t done = 0;
    for (int i = 0; i < 10000 && done < data.size(); ++i) {
      iovec iov{const_cast<char*>(data.data() + done), data.size() - done};
      ssize_t n = pair_->server().writev(&iov, 1);
      if (n > 0) done += static_cast<size_t>(n);
      if (n < 0) {
        ASSERT_EQ(errno, EAGAIN);
      }
      received_ += pair_->clientRead();
    }
    ASSERT_EQ(done, data.size());
  }

  TempDir dir_;
  BufferPool pool_;
  std::shared_ptr<const ServerContext> context_;
  std::unique_ptr<ClientAndServer> pair_;
  std::string received_;
};

TEST_F(TlsTransportTest, ASmallResponseIsOneRecordInOneWrite) {
  std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 1024\r\n\r\n";
  std::string body(1024, 'b');
  iovec iov[2] = {{head.data(), head.size()}, {body.data(), body.size()}};
  EXPECT_EQ(pair_->server().writev(iov, 2), static_cast<ssize_t>(head.size() + body.size()));
  std::vector<size_t> records = recordsOnTheWire();
  ASSERT_EQ(records.size(), 1u);
  // TLS 1.3 AES-GCM: the content type byte and a 16-byte tag.
  EXPECT_EQ(records[0], head.size() + body.size() + 17);
  EXPECT_EQ(pair_->clientRead(), head + body);
}

TEST_F(TlsTransportTest, RecordsStaySmallWhileWarmingUpThenGrowTo16k) {
  std::string chunk(32 * 1024, 'x');
  iovec iov{chunk.data(), chunk.size()};
  ASSERT_EQ(pair_->server().writev(&iov, 1), static_cast<ssize_t>(chunk.size()));
  for (size_t len : recordsOnTheWire()) EXPECT_LE(len, TlsTransport::kSmallRecord + 17);
  EXPECT_EQ(pair_->clientRead(), chunk);
  // Past the warm-up every record is full.
  writeAll(std::string(TlsTransport::kWarmupBytes, 'w'));
  ASSERT_EQ(pair_->server().writev(&iov, 1), static_cast<ssize_t>(chunk.size()));
  std::vector<size_t> records = recordsOnTheWire();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0], TlsTransport::kFullRecord + 17);
  EXPECT_EQ(pair_->clientRead(), chunk);
}

TEST_F(TlsTransportTest, GathersManySmallPiecesIntoFewRecords) {
  std::vector<std::string> pieces;
  std::vector<iovec> iov;
  std::string expected;
  for (int i = 0; i < 40; ++i) pieces.push_back(std::string(25, static_cast<char>('a' + i % 26)));
  for (auto& p : pieces) {
    iov.push_back({p.data(), p.size()});
    expected += p;
  }
  EXPECT_EQ(pair_->server().writev(iov.data(), static_cast<int>(iov.size())), 1000);
  EXPECT_EQ(recordsOnTheWire().size(), 1u);
  EXPECT_EQ(pair_->clientRead(), expected);
}

TEST_F(TlsTransportTest, ABlockedSocketReportsTheBytesOnceTheirRecordsLeft) {
  int small = 4096;
  setsockopt(pair_->server().fd(), SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
  std::string data(TlsTransport::kWriteBudget, 'p');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  iovec iov{data.data(), data.size()};
  // The client reads nothing yet: the socket fills, the write says EAGAIN.
  ssize_t n = pair_->server().writev(&iov, 1);
  ASSERT_EQ(n, -1);
  ASSERT_EQ(errno, EAGAIN);
  std::string got = pair_->clientRead();
  // The retry with the same bytes reports them all once everything has gone out.
  ssize_t reported = -1;
  for (int i = 0; i < 1000 && reported < 0; ++i) {
    reported = pair_->server().writev(&iov, 1);
    if (reported < 0) {
      ASSERT_EQ(errno, EAGAIN);
    }
    got += pair_->clientRead();
  }
  EXPECT_EQ(reported, static_cast<ssize_t>(data.size()));
  got += pair_->clientRead();
  EXPECT_EQ(got, data);
}

TEST_F(TlsTransportTest, SendFileReadsChunksAsTheSocketDrains) {
  std::string content(300 * 1024, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 % 251);
  dir_.write("file.bin", content);
  int fd = open(dir_.file("file.bin").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  uint64_t offset = 100;
  std::string got;
  for (int i = 0; i < 10000 && offset < content.size(); ++i) {
    ssize_t n = pair_->server().sendFile(fd, offset, content.size() - offset);
    ASSERT_NE(n, 0);
    if (n > 0) {
      EXPECT_LE(static_cast<size_t>(n), TlsTransport::kWriteBudget);
      offset += static_cast<uint64_t>(n);
    } else {
      ASSERT_EQ(errno, EAGAIN);
    }
    got += pair_->clientRead();
  }
  got += pair_->clientRead();
  EXPECT_EQ(got, content.substr(100));
  // Past the end of the file: 0, which the output queue treats as a truncated file.
  EXPECT_EQ(pair_->server().sendFile(fd, content.size(), 10), 0);
  close(fd);
}

TEST_F(TlsTransportTest, RecordsReadAheadAreReportedAsBufferedInput) {
  // Three records arrive at once; the server reads with a small buffer.
  pair_->clientWrite("one-");
  pair_->clientWrite("two-");
  pair_->clientWrite("three");
  char buf[6];
  ssize_t n = pair_->server().read(buf, 6);
  ASSERT_GT(n, 0);
  std::string got(buf, static_cast<size_t>(n));
  EXPECT_TRUE(pair_->server().hasBufferedInput());
  while (pair_->server().hasBufferedInput()) {
    n = pair_->server().read(buf, 6);
    ASSERT_GT(n, 0);
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(got, "one-two-three");
  EXPECT_EQ(pair_->server().read(buf, 6), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_FALSE(pair_->server().hasBufferedInput());
}

TEST_F(TlsTransportTest, APartialRecordIsNotBufferedInput) {
  // Only the first bytes of a record: the poller, not the transport, must wait for more.
  pair_->clientWrite("complete");
  char buf[64];
  ASSERT_EQ(pair_->server().read(buf, sizeof(buf)), 8);
  ASSERT_EQ(send(pair_->clientFd(), "\x17\x03\x03\x00\x40", 5, 0), 5);  // a header, no body
  EXPECT_EQ(pair_->server().read(buf, sizeof(buf)), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_FALSE(pair_->server().hasBufferedInput());
}

TEST_F(TlsTransportTest, ShutdownWriteSendsCloseNotify) {
  pair_->server().shutdownWrite();
  char b;
  int n = SSL_read(pair_->client(), &b, 1);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(SSL_get_error(pair_->client(), n), SSL_ERROR_ZERO_RETURN);
}

TEST_F(TlsTransportTest, ThePeerClosingIsAnEndOfFile) {
  SSL_shutdown(pair_->client());
  char buf[16];
  EXPECT_EQ(pair_->server().read(buf, sizeof(buf)), 0);
}

TEST_F(TlsTransportTest, GarbageFromThePeerIsAnError) {
  ASSERT_EQ(send(pair_->clientFd(), "\x17\x03\x03\x00\x05hello", 10, 0), 10);
  char buf[16];
  EXPECT_EQ(pair_->server().read(buf, sizeof(buf)), -1);
  EXPECT_NE(errno, EAGAIN);
  // And writing afterwards fails instead of pretending.
  iovec iov{buf, 4};
  EXPECT_EQ(pair_->server().writev(&iov, 1), -1);
}

TEST(TlsHandshake, AClientThatIsNotTlsFailsTheHandshake) {
  TempDir dir;
  BufferPool pool;
  auto cert = makeCert(dir, "a", "a.test", {"a.test"});
  auto context = ServerContext::build(tlsListen(cert));
  ASSERT_TRUE(context.ok());
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
  TlsTransport server(fds[0], *context, pool);
  EXPECT_EQ(server.handshake(), TlsTransport::Handshake::kWantRead);
  ASSERT_EQ(write(fds[1], "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 27), 27);
  EXPECT_EQ(server.handshake(), TlsTransport::Handshake::kFailed);
  EXPECT_FALSE(server.failure().empty());
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace scalws::worker::tls
