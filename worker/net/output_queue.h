// What a connection still has to send, in order: bytes it owns (copied), bytes it only
// references (stable for the response's life) and file slices (sendfile). flush() hands as
// much as possible to the transport in one writev (or one sendfile for a file at the head).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "worker/http/response_writer.h"
#include "worker/net/buffer_pool.h"
#include "worker/net/transport.h"

namespace scalws::worker {

class OutputQueue {
 public:
  enum class FlushResult { kDone, kBlocked, kError };

  explicit OutputQueue(BufferPool& pool) : pool_(pool) {}
  ~OutputQueue() { clear(); }
  OutputQueue(const OutputQueue&) = delete;
  OutputQueue& operator=(const OutputQueue&) = delete;

  // Room for `n` bytes to be written directly; commit() what was used.
  char* reserve(size_t n);
  void commit(size_t n);
  void append(std::string_view data);
  void appendStable(std::string_view data);
  void appendFile(const FileSlice& file);  // retains file.owner

  bool empty() const { return segments_.empty(); }
  uint64_t pendingBytes() const { return pending_; }
  // errno of the failed write when flush() returned kError.
  int lastErrno() const { return last_errno_; }

  FlushResult flush(Transport& transport);

  // A position to cut back to, valid until the next flush(): a response that turns out
  // to answer a request the codec then refused is replaced before a byte of it left.
  struct Mark {
    size_t segments = 0;
    size_t used = 0;
    uint64_t pending = 0;
    uint64_t flushes = 0;
  };
  Mark mark() const { return Mark{segments_.size(), used_, pending_, flushes_}; }
  // False (and nothing changed) when a flush happened since `m`.
  bool truncate(const Mark& m);
  // Drops everything (the connection is closing); releases file owners and memory.
  void clear();

 private:
  enum class Kind : uint8_t { kOwned, kStable, kFile };
  struct Segment {
    Kind kind;
    uint64_t offset;  // kOwned: into storage_; kFile: file offset
    uint64_t length;
    const char* data = nullptr;  // kStable
    int fd = -1;                 // kFile
    RefCounted* owner = nullptr;
  };

  void ensureCapacity(size_t extra);
  void consume(uint64_t n);
  void releaseStorage();

  BufferPool& pool_;
  std::vector<Segment> segments_;
  size_t head_ = 0;  // first segment not fully sent
  std::unique_ptr<char[]> storage_;
  size_t capacity_ = 0;
  size_t used_ = 0;
  uint64_t pending_ = 0;
  int last_errno_ = 0;
  uint64_t flushes_ = 0;
};

}  // namespace scalws::worker
