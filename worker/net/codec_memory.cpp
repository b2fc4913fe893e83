#include "worker/net/codec_memory.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#define SCALWS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCALWS_ASAN 1
#endif
#endif
#ifdef SCALWS_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace scalws::worker {
namespace {

// In front of every block: how many bytes the caller may use. A capacity of at most
// kMaxPooled is a multiple of kGranule and names the block's size class; a larger one is
// exactly what was asked for.
struct alignas(16) Header {
  size_t capacity;
};
static_assert(sizeof(Header) == 16, "blocks keep malloc's 16-byte alignment");

Header* headerOf(void* block) {
  return reinterpret_cast<Header*>(static_cast<char*>(block) - sizeof(Header));
}

void* payloadOf(Header* h) {
  return reinterpret_cast<char*>(h) + sizeof(Header);
}

void poison([[maybe_unused]] void* block, [[maybe_unused]] size_t size) {
#ifdef SCALWS_ASAN
  ASAN_POISON_MEMORY_REGION(block, size);
#endif
}

void unpoison([[maybe_unused]] void* block, [[maybe_unused]] size_t size) {
#ifdef SCALWS_ASAN
  ASAN_UNPOISON_MEMORY_REGION(block, size);
#endif
}

}  // namespace

CodecMemory::~CodecMemory() {
  for (size_t c = 0; c < kClasses; ++c) {
    const size_t capacity = (c + 1) * kGranule;
    for (FreeBlock* b = free_[c]; b != nullptr;) {
      unpoison(b, capacity);
      FreeBlock* next = b->next;
      std::free(headerOf(b));
      b = next;
    }
  }
}

void* CodecMemory::allocate(size_t size) noexcept {
  if (size > kMaxPooled) {
    if (size > SIZE_MAX - sizeof(Header)) return nullptr;
    auto* h = static_cast<Header*>(std::malloc(sizeof(Header) + size));
    if (h == nullptr) return nullptr;
    h->capacity = size;
    return payloadOf(h);
  }
  const size_t c = size == 0 ? 0 : (size - 1) / kGranule;
  const size_t capacity = (c + 1) * kGranule;
  if (FreeBlock* b = free_[c]; b != nullptr) {
    unpoison(b, capacity);
    free_[c] = b->next;
    cached_bytes_ -= sizeof(Header) + capacity;
    return b;
  }
  auto* h = static_cast<Header*>(std::malloc(sizeof(Header) + capacity));
  if (h == nullptr) return nullptr;
  h->capacity = capacity;
  return payloadOf(h);
}

void* CodecMemory::allocateZeroed(size_t count, size_t size) noexcept {
  if (size != 0 && count > SIZE_MAX / size) return nullptr;
  void* block = allocate(count * size);
  if (block != nullptr) std::memset(block, 0, count * size);
  return block;
}

void* CodecMemory::reallocate(void* block, size_t size) noexcept {
  if (block == nullptr) return allocate(size);
  if (size == 0) {
    release(block);
    return nullptr;
  }
  const size_t capacity = headerOf(block)->capacity;
  if (size <= capacity) return block;
  void* grown = allocate(size);
  if (grown == nullptr) return nullptr;  // the old block stays the caller's, as realloc's
  std::memcpy(grown, block, capacity);
  release(block);
  return grown;
}

void CodecMemory::release(void* block) noexcept {
  if (block == nullptr) return;
  Header* h = headerOf(block);
  const size_t capacity = h->capacity;
  if (capacity > kMaxPooled || cached_bytes_ + sizeof(Header) + capacity > max_cached_bytes_) {
    std::free(h);
    return;
  }
  const size_t c = capacity / kGranule - 1;
  auto* b = static_cast<FreeBlock*>(block);
  b->next = free_[c];
  free_[c] = b;
  cached_bytes_ += sizeof(Header) + capacity;
  poison(block, capacity);
}

void* CodecMemory::mallocFn(size_t size, void* self) {
  return static_cast<CodecMemory*>(self)->allocate(size);
}

void CodecMemory::freeFn(void* block, void* self) {
  static_cast<CodecMemory*>(self)->release(block);
}

void* CodecMemory::callocFn(size_t count, size_t size, void* self) {
  return static_cast<CodecMemory*>(self)->allocateZeroed(count, size);
}

void* CodecMemory::reallocFn(void* block, size_t size, void* self) {
  return static_cast<CodecMemory*>(self)->reallocate(block, size);
}

}  // namespace scalws::worker
