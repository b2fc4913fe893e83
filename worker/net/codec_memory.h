// The memory functions the protocol libraries get (nghttp2_mem, nghttp3_mem): blocks of up
// to 1 KiB are kept per event loop on free lists by size class and handed out again.
//
// Why: nghttp2 and nghttp3 allocate a handful of small objects for every request (frame
// queue entries, header blocks, output chunks) and free them when the stream closes. With
// many streams closing in one turn of the loop, glibc's per-thread cache (seven blocks per
// size) overflows and most of those calls take malloc's slow paths; a perf profile of an
// HTTP/3 worker showed malloc and free at about 5 % of its CPU. Here a block costs a list
// push and pop.
//
// Every block carries a 16-byte header with its capacity, which free() needs and the
// libraries do not pass. Blocks over 1 KiB go to malloc directly. The free lists hold at
// most `max_cached_bytes`; past that, blocks are freed. Under AddressSanitizer a cached
// block is poisoned, so a use after free is still caught.
//
// One per event loop, living longer than every session that uses it. Loop thread only.
#pragma once

#include <array>
#include <cstddef>

namespace scalws::worker {

class CodecMemory {
 public:
  static constexpr size_t kGranule = 16;
  static constexpr size_t kMaxPooled = 1024;

  explicit CodecMemory(size_t max_cached_bytes = 2 * 1024 * 1024)
      : max_cached_bytes_(max_cached_bytes) {}
  ~CodecMemory();
  CodecMemory(const CodecMemory&) = delete;
  CodecMemory& operator=(const CodecMemory&) = delete;

  // As malloc, calloc, realloc and free, including their null returns and free(nullptr).
  void* allocate(size_t size) noexcept;
  void* allocateZeroed(size_t count, size_t size) noexcept;
  void* reallocate(void* block, size_t size) noexcept;
  void release(void* block) noexcept;

  // Bytes of blocks waiting on the free lists, headers included.
  size_t cachedBytes() const { return cached_bytes_; }

  // The four functions in the shape both libraries take, with `this` as their user data.
  static void* mallocFn(size_t size, void* self);
  static void freeFn(void* block, void* self);
  static void* callocFn(size_t count, size_t size, void* self);
  static void* reallocFn(void* block, size_t size, void* self);

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static constexpr size_t kClasses = kMaxPooled / kGranule;

  size_t max_cached_bytes_;
  size_t cached_bytes_ = 0;
  std::array<FreeBlock*, kClasses> free_{};
};

}  // namespace scalws::worker
