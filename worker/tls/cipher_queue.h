// Encrypted bytes on their way to the socket: a chain of the loop's pooled 16 KiB blocks
// that OpenSSL's output BIO appends records to, flushed with one writev. Holding the
// records here (instead of letting OpenSSL write to the socket) is what lets a response
// of several records leave in one syscall and a blocked socket never fail a TLS write.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "worker/net/buffer_pool.h"

namespace scalws::worker::tls {

class CipherQueue {
 public:
  enum class Flush { kDone, kBlocked, kError };

  explicit CipherQueue(BufferPool& pool) : pool_(pool) {}
  ~CipherQueue();
  CipherQueue(const CipherQueue&) = delete;
  CipherQueue& operator=(const CipherQueue&) = delete;

  void append(const char* data, size_t len);
  // Writes until empty (kDone) or the socket would block (kBlocked); kError keeps errno.
  Flush flush(int fd);
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

 private:
  void dropFront(size_t n);

  BufferPool& pool_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t head_ = 0;  // first unsent byte in blocks_.front()
  size_t tail_ = 0;  // bytes used in blocks_.back()
  size_t size_ = 0;
};

}  // namespace scalws::worker::tls
