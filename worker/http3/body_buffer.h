// A stream's response body from the handler until the peer acknowledged it. QUIC may send
// any byte again until it is acknowledged, so nghttp3 borrows views of the body (take())
// and says when they may go (acknowledge()) — unlike HTTP/2, where a byte is gone once
// written. Copied bytes go into pooled 16 KiB blocks, stable bytes are only referenced,
// and a file slice is read (pread) into a block when nghttp3 asks for it, one block at a
// time, so a large file never sits in memory whole.
//
// Bytes are handed out and acknowledged in order (one stream's data is one byte sequence).
#pragma once

#include <nghttp3/nghttp3.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string_view>

#include "worker/http/response_writer.h"
#include "worker/net/buffer_pool.h"

namespace scalws::worker::http3 {

class BodyBuffer {
 public:
  explicit BodyBuffer(BufferPool& pool) : pool_(pool) {}
  ~BodyBuffer() { clear(); }
  BodyBuffer(const BodyBuffer&) = delete;
  BodyBuffer& operator=(const BodyBuffer&) = delete;

  void append(std::string_view data);
  void appendStable(std::string_view data);
  void appendFile(const FileSlice& file);  // retains file.owner until read or cleared

  // Fills up to `max` views with bytes not handed out yet and marks them handed out. A file
  // slice in the way is read into a block first (at most one block per call). Returns the
  // number of views; failed() tells a read error from "nothing to give".
  size_t take(nghttp3_vec* out, size_t max);
  // The peer acknowledged the next `n` bytes handed out: free what they covered.
  void acknowledge(uint64_t n);

  uint64_t unsent() const { return appended_ - sent_; }
  // Bytes held: not yet acknowledged (unsent ones included).
  uint64_t held() const { return appended_ - acked_; }
  bool failed() const { return failed_; }
  void clear();

 private:
  enum class Kind : uint8_t { kBlock, kStable, kFile };
  struct Segment {
    Kind kind = Kind::kBlock;
    const uint8_t* data = nullptr;  // kBlock, kStable
    uint64_t length = 0;
    uint64_t sent = 0;              // handed out
    uint64_t acked = 0;             // acknowledged
    std::unique_ptr<char[]> block;  // kBlock: from the pool, BufferPool::kBlockSize bytes
    int fd = -1;                    // kFile: bytes [offset, offset + length) of fd
    uint64_t offset = 0;
    RefCounted* owner = nullptr;
  };

  bool readFileBlock(size_t index);
  void release(Segment& s);

  BufferPool& pool_;
  std::deque<Segment> segments_;
  size_t first_unsent_ = 0;  // index of the first segment with bytes not handed out
  uint64_t appended_ = 0;
  uint64_t sent_ = 0;
  uint64_t acked_ = 0;
  bool failed_ = false;
};

}  // namespace scalws::worker::http3
