// The byte transport under a connection: plain TCP or TLS (worker/tls/tls_transport.h).
// Non-blocking; every call returns what the kernel (or TLS engine) took, or -1 with errno
// (EAGAIN when it would block).
//
// A writer retries a write that returned EAGAIN with the same bytes at the head (as
// ByteQueue does): a TLS transport may already hold them encrypted and only report them
// taken once the ciphertext has left.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

namespace scalws::worker {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual ssize_t read(char* buf, size_t len) noexcept = 0;
  virtual ssize_t writev(const iovec* iov, int count) noexcept = 0;
  // The same, when more bytes (a file) follow at once: lets TCP fill whole segments
  // instead of sending the head alone (nginx's tcp_nopush).
  virtual ssize_t writevMore(const iovec* iov, int count) noexcept { return writev(iov, count); }
  // Sends `len` bytes of `file_fd` from `offset`; advances nothing itself.
  virtual ssize_t sendFile(int file_fd, uint64_t offset, size_t len) noexcept = 0;
  // True when the transport can hand file bytes to the kernel without copying them.
  virtual bool zeroCopyFiles() const noexcept = 0;
  virtual int fd() const noexcept = 0;
  // True when received bytes wait inside the transport where the poller cannot see them
  // (TLS records read ahead): a connection that wants to read must read again without
  // waiting for the socket to become readable.
  virtual bool hasBufferedInput() const noexcept { return false; }
  // Ends the sending direction (lingering close): TLS sends close_notify first.
  virtual void shutdownWrite() noexcept;
};

class PlainTransport final : public Transport {
 public:
  explicit PlainTransport(int fd) : fd_(fd) {}
  ssize_t read(char* buf, size_t len) noexcept override;
  ssize_t writev(const iovec* iov, int count) noexcept override;
  ssize_t writevMore(const iovec* iov, int count) noexcept override;
  ssize_t sendFile(int file_fd, uint64_t offset, size_t len) noexcept override;
  bool zeroCopyFiles() const noexcept override { return true; }
  int fd() const noexcept override { return fd_; }

 private:
  int fd_;
};

}  // namespace scalws::worker
