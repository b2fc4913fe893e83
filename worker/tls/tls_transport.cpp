#include "worker/tls/tls_transport.h"

#include <openssl/err.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "worker/tls/openssl_errors.h"

namespace scalws::worker::tls {
namespace {

uint64_t coarseNowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

}  // namespace

BIO_METHOD* TlsTransport::bioMethod() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "scalws-socket");
    BIO_meth_set_write(m, &TlsTransport::bioWrite);
    BIO_meth_set_read(m, &TlsTransport::bioRead);
    BIO_meth_set_ctrl(m, &TlsTransport::bioCtrl);
    BIO_meth_set_create(m, [](BIO* b) {
      BIO_set_init(b, 1);
      return 1;
    });
    return m;
  }();
  return method;
}

int TlsTransport::bioWrite(BIO* bio, const char* data, int len) {
  auto* self = static_cast<TlsTransport*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (len <= 0) return 0;
  self->cipher_.append(std::string_view(data, static_cast<size_t>(len)));
  return len;  // never blocks: the records wait in the queue until the socket takes them
}

int TlsTransport::bioRead(BIO* bio, char* buf, int len) {
  auto* self = static_cast<TlsTransport*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (len <= 0) return 0;
  ssize_t n;
  do {
    n = ::read(self->fd_, buf, static_cast<size_t>(len));
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
    return -1;
  }
  return static_cast<int>(n);
}

long TlsTransport::bioCtrl(BIO* bio, int cmd, long num, void* ptr) {
  (void)bio;
  (void)num;
  (void)ptr;
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

TlsTransport::TlsTransport(int fd, std::shared_ptr<const ServerContext> context, BufferPool& pool)
    : fd_(fd), context_(std::move(context)), pool_(pool), socket_(fd), cipher_(pool) {
  ssl_ = context_->newSsl();
  if (ssl_ == nullptr) return;
  BIO* bio = BIO_new(bioMethod());
  if (bio == nullptr) {
    SSL_free(ssl_);
    ssl_ = nullptr;
    return;
  }
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);
  SSL_set_accept_state(ssl_);
}

TlsTransport::~TlsTransport() {
  if (ssl_ == nullptr) return;
  // Clients often just close the socket. OpenSSL would then drop the session from the
  // cache as if it were broken; only a connection that failed deserves that (nginx does
  // the same).
  if (!failed_ && SSL_is_init_finished(ssl_)) {
    SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  }
  SSL_free(ssl_);
}

bool TlsTransport::flushPending() {
  if (cipher_.empty()) return true;
  if (cipher_.flush(socket_) == ByteQueue::FlushResult::kError) failed_ = true;
  return cipher_.empty();
}

TlsTransport::Handshake TlsTransport::handshake() noexcept {
  ERR_clear_error();
  int r = SSL_do_handshake(ssl_);
  int err = r == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, r);
  // Whatever the outcome, send what OpenSSL wrote: the next flight, or the alert that
  // tells the client why it is refused (e.g. protocol_version for TLS 1.0).
  bool flushed = flushPending();
  if (failed_) {
    failure_ = "write failed: " + std::string(strerror(errno));
    return Handshake::kFailed;
  }
  if (err == SSL_ERROR_NONE) {
    read_blocked_ = false;  // application records may have been read ahead
    last_write_ms_ = coarseNowMs();
    return flushed ? Handshake::kDone : Handshake::kWantWrite;
  }
  if (err == SSL_ERROR_WANT_READ) return flushed ? Handshake::kWantRead : Handshake::kWantWrite;
  if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
    failure_ = errno != 0 ? strerror(errno) : "connection closed during the handshake";
  } else {
    failure_ = takeOpensslErrors();
  }
  ERR_clear_error();
  failed_ = true;
  return Handshake::kFailed;
}

std::string_view TlsTransport::alpn() const {
  const unsigned char* data = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(ssl_, &data, &len);
  return data == nullptr ? std::string_view()
                         : std::string_view(reinterpret_cast<const char*>(data), len);
}

bool TlsTransport::sessionReused() const {
  return SSL_session_reused(ssl_) == 1;
}

bool TlsTransport::hasBufferedInput() const noexcept {
  if (ssl_ == nullptr || failed_) return false;
  // SSL_pending: decrypted bytes of a record already opened. SSL_has_pending also counts
  // raw bytes read ahead, which may be only part of a record: after a read that stopped
  // for want of more (read_blocked_) those wait for the socket like anything else.
  return SSL_pending(ssl_) > 0 || (!read_blocked_ && SSL_has_pending(ssl_) == 1);
}

ssize_t TlsTransport::read(char* buf, size_t len) noexcept {
  if (failed_) {
    errno = EPROTO;
    return -1;
  }
  size_t total = 0;
  while (total < len) {
    ERR_clear_error();
    int chunk = static_cast<int>(std::min<size_t>(len - total, INT32_MAX));
    int n = SSL_read(ssl_, buf + total, chunk);
    if (n > 0) {
      total += static_cast<size_t>(n);
      read_blocked_ = false;
      if (SSL_has_pending(ssl_) != 1) break;  // spare the read() that would say EAGAIN
      continue;
    }
    int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ) {
      read_blocked_ = true;
      break;
    }
    if (err == SSL_ERROR_ZERO_RETURN ||
        (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && n == 0)) {
      if (total > 0) break;  // report the data now, the end on the next call
      return 0;
    }
    ERR_clear_error();
    if (total > 0) break;
    failed_ = true;
    if (err != SSL_ERROR_SYSCALL || errno == 0) errno = EPROTO;
    return -1;
  }
  // Reading may have produced records of our own (a KeyUpdate answer): send them along.
  if (!cipher_.empty()) flushPending();
  if (total == 0) {
    errno = EAGAIN;
    return -1;
  }
  return static_cast<ssize_t>(total);
}

ssize_t TlsTransport::settlePrevious() {
  if (failed_) {
    errno = EPIPE;
    return -1;
  }
  if (!cipher_.empty()) {
    ByteQueue::FlushResult f = cipher_.flush(socket_);
    if (f == ByteQueue::FlushResult::kError) {
      failed_ = true;
      return -1;
    }
    if (f == ByteQueue::FlushResult::kBlocked) {
      errno = EAGAIN;
      return -1;
    }
  }
  if (unreported_ > 0) {
    size_t n = unreported_;
    unreported_ = 0;
    return static_cast<ssize_t>(n);
  }
  // A fresh write: after a pause long enough for TCP to forget its window, warm up again.
  uint64_t now = coarseNowMs();
  if (now - last_write_ms_ > kIdleResetMs) warm_bytes_ = 0;
  last_write_ms_ = now;
  return 0;
}

size_t TlsTransport::recordLimit() {
  return warm_bytes_ < kWarmupBytes ? kSmallRecord : kFullRecord;
}

bool TlsTransport::encryptRecord(const char* data, size_t len) {
  ERR_clear_error();
  int n = SSL_write(ssl_, data, static_cast<int>(len));
  if (n != static_cast<int>(len)) {
    // The BIO never blocks, so anything short is a fatal TLS error.
    ERR_clear_error();
    failed_ = true;
    errno = EPROTO;
    return false;
  }
  warm_bytes_ += len;
  return true;
}

ssize_t TlsTransport::completeWrite(size_t plain) {
  ByteQueue::FlushResult f = cipher_.flush(socket_);
  if (f == ByteQueue::FlushResult::kError) {
    failed_ = true;
    return -1;
  }
  if (f == ByteQueue::FlushResult::kBlocked) {
    unreported_ = plain;  // reported by the retry, once the records have left
    errno = EAGAIN;
    return -1;
  }
  return static_cast<ssize_t>(plain);
}

ssize_t TlsTransport::writev(const iovec* iov, int count) noexcept {
  ssize_t settled = settlePrevious();
  if (settled != 0) return settled;

  std::unique_ptr<char[]> scratch;
  size_t total = 0;
  int i = 0;
  size_t offset = 0;  // into iov[i]
  while (total < kWriteBudget && i < count) {
    size_t want = std::min(recordLimit(), kWriteBudget - total);
    const char* base = static_cast<const char*>(iov[i].iov_base) + offset;
    size_t here = iov[i].iov_len - offset;
    const char* record;
    size_t record_len;
    if (here >= want || i + 1 == count) {
      // The record lies within one element: encrypt it in place.
      record = base;
      record_len = std::min(here, want);
      offset += record_len;
    } else {
      // Gather small pieces (a head, a body, the next response) into one record.
      if (!scratch) scratch = pool_.take();
      record_len = 0;
      while (record_len < want && i < count) {
        size_t take = std::min(want - record_len, iov[i].iov_len - offset);
        std::memcpy(scratch.get() + record_len, static_cast<const char*>(iov[i].iov_base) + offset,
                    take);
        record_len += take;
        offset += take;
        if (offset == iov[i].iov_len) {
          ++i;
          offset = 0;
        }
      }
      record = scratch.get();
    }
    if (i < count && offset == iov[i].iov_len) {
      ++i;
      offset = 0;
    }
    if (record_len == 0) continue;
    if (!encryptRecord(record, record_len)) {
      if (scratch) pool_.give(std::move(scratch));
      return -1;
    }
    total += record_len;
  }
  if (scratch) pool_.give(std::move(scratch));
  return completeWrite(total);
}

ssize_t TlsTransport::sendFile(int file_fd, uint64_t offset, size_t len) noexcept {
  ssize_t settled = settlePrevious();
  if (settled != 0) return settled;

  std::unique_ptr<char[]> scratch = pool_.take();
  size_t total = 0;
  size_t goal = std::min(len, kWriteBudget);
  while (total < goal) {
    size_t want = std::min(recordLimit(), goal - total);
    ssize_t n;
    do {
      n = ::pread(file_fd, scratch.get(), want, static_cast<off_t>(offset + total));
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      if (total > 0) break;  // report what went; the next call meets the error or the end
      pool_.give(std::move(scratch));
      return n;  // 0: the file ended early, which the caller treats as an error
    }
    if (!encryptRecord(scratch.get(), static_cast<size_t>(n))) {
      pool_.give(std::move(scratch));
      return -1;
    }
    total += static_cast<size_t>(n);
  }
  pool_.give(std::move(scratch));
  return completeWrite(total);
}

void TlsTransport::shutdownWrite() noexcept {
  if (ssl_ != nullptr && !failed_ && SSL_is_init_finished(ssl_)) {
    ERR_clear_error();
    SSL_shutdown(ssl_);  // queues close_notify (RFC 8446 §6.1)
    ERR_clear_error();
    flushPending();
  }
  // Half-close only once every record is out: cutting one short would corrupt the stream.
  if (cipher_.empty()) ::shutdown(fd_, SHUT_WR);
}

}  // namespace scalws::worker::tls
