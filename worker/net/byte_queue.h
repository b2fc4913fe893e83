// Bytes on their way out, in order: bytes the queue owns (copied into the loop's pooled
// 16 KiB blocks), bytes it only references (stable for the response's life) and file
// slices. The one segmented queue of the worker: a connection's output (flush() hands as
// much as possible to the transport in one writev, or one sendfile for a file at the
// head), an HTTP/2 stream's response body waiting for window (front()/consume(), files
// read only when their DATA frame is written) and TLS records waiting for the socket.
//
// Owned bytes fill the tail block and continue in a new one; a block goes back to the pool
// as soon as the bytes in it were consumed, and an empty queue holds no block at all, so
// an idle connection keeps no memory here and a queue that never empties does not grow.
// reserve(n) gives n contiguous bytes (a block of its own when n exceeds one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "worker/http/response_writer.h"
#include "worker/net/buffer_pool.h"
#include "worker/net/transport.h"

namespace scalws::worker {

class ByteQueue {
 public:
  enum class FlushResult { kDone, kBlocked, kError };
  enum class Kind : uint8_t { kOwned, kStable, kFile };
  struct Segment {
    Kind kind;
    const char* data = nullptr;  // kOwned, kStable: the next byte
    uint64_t offset = 0;         // kFile: file offset of the next byte
    uint64_t length = 0;
    int fd = -1;                  // kFile
    RefCounted* owner = nullptr;  // kFile, kStable: retained until the bytes left
    size_t block = 0;             // kOwned: index of its block
  };

  explicit ByteQueue(BufferPool& pool) : pool_(pool) {}
  ~ByteQueue() { clear(); }
  ByteQueue(const ByteQueue&) = delete;
  ByteQueue& operator=(const ByteQueue&) = delete;

  // Room for `n` contiguous bytes to be written directly; commit() what was used.
  char* reserve(size_t n) {
    if (!blocks_.empty() && blocks_.back().size - blocks_.back().used >= n) {
      return blocks_.back().data + blocks_.back().used;
    }
    return reserveBlock(n);
  }
  void commit(size_t n) {
    if (n == 0) return;
    Block& tail = blocks_.back();
    const char* at = tail.data + tail.used;
    tail.used += n;
    pending_ += n;
    // Bytes that continue the last segment join it (a head and its small body: one iovec).
    if (!empty() && segments_.back().kind == Kind::kOwned &&
        segments_.back().block == blocks_.size() - 1 &&
        segments_.back().data + segments_.back().length == at) {
      segments_.back().length += n;
      return;
    }
    addOwnedSegment(at, n);
  }
  void append(std::string_view data) {
    // Most appends fit the tail block: one copy, no loop.
    if (!blocks_.empty() && blocks_.back().size - blocks_.back().used >= data.size()) {
      if (data.empty()) return;
      std::memcpy(blocks_.back().data + blocks_.back().used, data.data(), data.size());
      commit(data.size());
      return;
    }
    appendAcrossBlocks(data);
  }
  // Referenced, not copied; `owner` (when given) is retained until the bytes left.
  void appendStable(std::string_view data, RefCounted* owner = nullptr);
  void appendFile(const FileSlice& file);  // retains file.owner

  bool empty() const { return head_ == segments_.size(); }
  uint64_t pendingBytes() const { return pending_; }
  uint64_t size() const { return pending_; }

  // The first segment; valid until the queue changes. Only when !empty().
  const Segment& front() const { return segments_[head_]; }
  // Drops the first `n` bytes (n <= size()), releasing file owners and blocks as they end.
  void consume(uint64_t n);

  // Writes to the transport until empty (kDone), until it would block (kBlocked), or a
  // failure (kError; lastErrno() says which, EIO for a file that ended early).
  FlushResult flush(Transport& transport);
  int lastErrno() const { return last_errno_; }

  // A position to cut back to, valid until the next flush() or consume(): a response that
  // turns out to answer a request the codec then refused is replaced before a byte of it
  // left.
  struct Mark {
    size_t segments = 0;
    size_t blocks = 0;
    size_t tail_used = 0;
    uint64_t pending = 0;
    uint64_t changes = 0;
  };
  Mark mark() const {
    return Mark{segments_.size(), blocks_.size(), blocks_.empty() ? 0 : blocks_.back().used,
                pending_, changes_};
  }
  // False (and nothing changed) when bytes left since `m`.
  bool truncate(const Mark& m);
  // Drops everything (the connection is closing); releases file owners and blocks.
  void clear();

  size_t blocksForTest() const;

 private:
  // Trivially destructible, so clearing the list is free: the blocks themselves are given
  // back (or deleted, when larger than a pooled one) by releaseBlock().
  struct Block {
    char* data = nullptr;  // null once given back
    size_t size = 0;
    size_t used = 0;
  };

  char* reserveBlock(size_t n);
  void addOwnedSegment(const char* at, size_t n);
  void appendAcrossBlocks(std::string_view data);
  void releaseBlock(Block& b);
  void releaseBlocksBefore(size_t index);
  void reset();

  BufferPool& pool_;
  std::vector<Segment> segments_;
  size_t head_ = 0;  // first segment not fully consumed
  std::vector<Block> blocks_;
  size_t first_block_ = 0;  // blocks before it were given back
  uint64_t pending_ = 0;
  size_t file_owners_ = 0;  // segments still holding their owner
  uint64_t changes_ = 0;    // flushes and consumes, for Mark
  int last_errno_ = 0;
};

}  // namespace scalws::worker
