// A stream's response body waiting for flow-control window: bytes the stream owns
// (copied), bytes it only references (stable for the response's life) and file slices
// (read when their DATA frame is written, never all at once). Per stream, so one slow or
// window-starved stream never holds up the others' bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "worker/http/response_writer.h"

namespace scalws::worker::http2 {

class BodyQueue {
 public:
  enum class Kind : uint8_t { kOwned, kStable, kFile };
  struct Segment {
    Kind kind;
    uint64_t offset;  // kOwned: into the owned buffer; kFile: file offset
    uint64_t length;
    const char* data = nullptr;  // kStable
    int fd = -1;                 // kFile
    RefCounted* owner = nullptr;
  };

  BodyQueue() = default;
  ~BodyQueue() { clear(); }
  BodyQueue(const BodyQueue&) = delete;
  BodyQueue& operator=(const BodyQueue&) = delete;

  void append(std::string_view data);
  void appendStable(std::string_view data);
  void appendFile(const FileSlice& file);  // retains file.owner until consumed or cleared

  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The first segment; valid while the queue is not changed. Only when !empty().
  const Segment& front() const { return segments_[head_]; }
  const char* ownedData(const Segment& s) const { return owned_.data() + s.offset; }
  // Drops the first `n` bytes (n <= size()), releasing file owners as slices end.
  void consume(uint64_t n);
  void clear();
  size_t ownedBytesForTest() const { return owned_.size(); }

 private:
  std::vector<Segment> segments_;
  size_t head_ = 0;
  static constexpr uint64_t kCompactAfter = 32 * 1024;

  std::string owned_;            // copied bytes, in segment order
  uint64_t owned_consumed_ = 0;  // sent prefix of owned_, dropped when empty or large
  uint64_t size_ = 0;
};

}  // namespace scalws::worker::http2
