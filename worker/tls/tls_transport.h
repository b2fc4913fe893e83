// TLS over a connection's non-blocking socket, as a Transport: the HTTP/1 and HTTP/2
// connections above it do not know the difference.
//
// OpenSSL reads the socket itself through a small BIO (read-ahead: every record the kernel
// holds in one read()), but its records go to a ByteQueue, not to the socket: a write
// encrypts up to 64 KiB of the caller's bytes and sends all those records with one writev.
// When the socket takes only part of them, the call returns EAGAIN and the transport keeps
// the rest; the caller retries with the same bytes at its head (Transport contract) and is
// told they were taken once their ciphertext has left. So the caller's queue stays the
// single measure of what is still to send, and backpressure works as on plain TCP.
//
// Record sizes (dynamic record sizing): while a connection warms up — its first 128 KiB,
// and again after a second without writes, when TCP's window may have shrunk — records
// carry at most 1300 bytes, so each fits one TCP segment and the client can decrypt as
// packets arrive; afterwards records are full 16 KiB. A small response is one record either
// way, and in one syscall with its head.
//
// Files (sendFile) are pread into a pooled block and encrypted chunk by chunk, as the
// socket drains; there is no kTLS in this OpenSSL build, so no zero-copy.
//
// Owns the SSL; the fd is the connection's (it closes it, as with PlainTransport).
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string_view>

#include "worker/net/buffer_pool.h"
#include "worker/net/byte_queue.h"
#include "worker/net/transport.h"
#include "worker/tls/server_context.h"

namespace scalws::worker::tls {

class TlsTransport final : public Transport {
 public:
  enum class Handshake { kDone, kWantRead, kWantWrite, kFailed };

  static constexpr size_t kSmallRecord = 1300;
  static constexpr size_t kFullRecord = 16384;
  static constexpr uint64_t kWarmupBytes = 128 * 1024;
  static constexpr uint64_t kIdleResetMs = 1000;
  static constexpr size_t kWriteBudget = 64 * 1024;  // plaintext encrypted per write call

  TlsTransport(int fd, std::shared_ptr<const ServerContext> context, BufferPool& pool);
  ~TlsTransport() override;
  TlsTransport(const TlsTransport&) = delete;
  TlsTransport& operator=(const TlsTransport&) = delete;

  // False when no SSL could be made (out of memory): close the connection.
  bool valid() const { return ssl_ != nullptr; }

  // Advances the handshake; kWantWrite means records wait for the socket (flushPending()).
  Handshake handshake() noexcept;
  // After the handshake: the ALPN protocol ("h2", "http/1.1") or "" when none was agreed.
  std::string_view alpn() const;
  bool sessionReused() const;
  // Why the handshake failed (OpenSSL's reasons), for the debug log.
  const std::string& failure() const { return failure_; }
  // Sends records produced outside a write (handshake flights, alerts); true when none wait.
  bool flushPending();
  bool hasPendingOutput() const { return !cipher_.empty(); }

  // Transport
  ssize_t read(char* buf, size_t len) noexcept override;
  ssize_t writev(const iovec* iov, int count) noexcept override;
  ssize_t sendFile(int file_fd, uint64_t offset, size_t len) noexcept override;
  bool zeroCopyFiles() const noexcept override { return false; }
  int fd() const noexcept override { return fd_; }
  bool hasBufferedInput() const noexcept override;
  void shutdownWrite() noexcept override;

  SSL* sslForTest() const { return ssl_; }

 private:
  static BIO_METHOD* bioMethod();
  static int bioWrite(BIO* bio, const char* data, int len);
  static int bioRead(BIO* bio, char* buf, int len);
  static long bioCtrl(BIO* bio, int cmd, long num, void* ptr);

  // Before encrypting new bytes: sends what is left of the last write. Returns 0 to go on,
  // a byte count to report (the last write completed), or -1 (errno set).
  ssize_t settlePrevious();
  // Encrypts `len` bytes as one record; false on a fatal TLS error.
  bool encryptRecord(const char* data, size_t len);
  // Sends the records just made and reports `plain` or EAGAIN (see the header comment).
  ssize_t completeWrite(size_t plain);
  size_t recordLimit();

  int fd_;
  std::shared_ptr<const ServerContext> context_;
  BufferPool& pool_;
  SSL* ssl_ = nullptr;
  PlainTransport socket_;  // the fd itself, for the records
  ByteQueue cipher_;       // records waiting for the socket
  size_t unreported_ = 0;  // plaintext encrypted by the last write, not yet reported taken
  bool read_blocked_ = false;
  bool failed_ = false;
  uint64_t warm_bytes_ = 0;
  uint64_t last_write_ms_ = 0;
  std::string failure_;
};

}  // namespace scalws::worker::tls
