#include "common/cache/shared_area.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

namespace scalws::common::cache {
namespace {

// More descriptors than this would cost more index than the entries are worth.
constexpr uint32_t kMaxDescriptors = 4u << 20;

size_t alignUp(size_t n, size_t to) {
  return (n + to - 1) / to * to;
}

common::Status initMutex(pthread_mutex_t* mutex) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  int rc = pthread_mutex_init(mutex, &attr);
  pthread_mutexattr_destroy(&attr);
  if (rc != 0) return common::errnoStatus(rc, "pthread_mutex_init (cache area)");
  return common::okStatus();
}

void initialise(char* base, const AreaLayout& layout) {
  auto* header = new (base) AreaHeader();
  header->magic = kAreaMagic;
  header->version = kAreaVersion;
  header->block_size = kBlockSize;
  header->total_size = layout.total_size;
  header->block_count = layout.block_count;
  header->descriptor_count = layout.descriptor_count;
  header->bucket_count = layout.bucket_count;
  header->process_slots = kProcessSlots;
  header->next_generation = 1;
  // Every block free, chained in order; every descriptor free, likewise.
  auto* block_next = reinterpret_cast<uint32_t*>(base + layout.block_next_offset);
  for (uint32_t i = 1; i <= layout.block_count; ++i) {
    block_next[i - 1] = i < layout.block_count ? i + 1 : 0;
  }
  header->free_block_head = layout.block_count > 0 ? 1 : 0;
  header->free_blocks = layout.block_count;
  auto* descriptors = reinterpret_cast<Descriptor*>(base + layout.descriptors_offset);
  for (uint32_t i = 1; i <= layout.descriptor_count; ++i) {
    Descriptor& d = descriptors[i - 1];
    std::memset(&d, 0, sizeof(d));
    d.free_next = i < layout.descriptor_count ? i + 1 : 0;
  }
  header->free_descriptor_head = layout.descriptor_count > 0 ? 1 : 0;
  header->free_descriptors = layout.descriptor_count;
}

}  // namespace

AreaLayout layoutFor(uint64_t memory) {
  AreaLayout l;
  l.block_count = static_cast<uint32_t>(std::max<uint64_t>(1, memory / kBlockSize));
  l.descriptor_count = std::min(l.block_count, kMaxDescriptors);
  l.bucket_count = 1;
  while (l.bucket_count < l.descriptor_count) l.bucket_count <<= 1;
  size_t at = kPageSize;
  l.slots_offset = at;
  at += sizeof(ProcessSlot) * kProcessSlots;
  l.key_buckets_offset = alignUp(at, 64);
  at = l.key_buckets_offset + sizeof(uint32_t) * l.bucket_count;
  l.uri_buckets_offset = alignUp(at, 64);
  at = l.uri_buckets_offset + sizeof(uint32_t) * l.bucket_count;
  l.block_next_offset = alignUp(at, 64);
  at = l.block_next_offset + sizeof(uint32_t) * l.block_count;
  l.descriptors_offset = alignUp(at, 64);
  at = l.descriptors_offset + sizeof(Descriptor) * l.descriptor_count;
  l.blocks_offset = alignUp(at, kPageSize);
  l.total_size = l.blocks_offset + size_t{l.block_count} * kBlockSize;
  return l;
}

common::Result<common::UniqueFd> SharedArea::create(const char* name, uint64_t memory) {
  AreaLayout layout = layoutFor(memory);
  common::UniqueFd fd(::memfd_create(name, MFD_CLOEXEC));
  if (!fd) return common::errnoStatus(errno, "memfd_create (cache area)");
  if (::ftruncate(fd.get(), static_cast<off_t>(layout.total_size)) != 0) {
    return common::errnoStatus(errno, "ftruncate (cache area)");
  }
  void* p = ::mmap(nullptr, layout.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (p == MAP_FAILED) return common::errnoStatus(errno, "mmap (cache area)");
  char* base = static_cast<char*>(p);
  initialise(base, layout);
  auto* header = reinterpret_cast<AreaHeader*>(base);
  common::Status status = initMutex(&header->lock);
  for (size_t i = 0; i < kProcessSlots && status.ok(); ++i) {
    auto* slot = reinterpret_cast<ProcessSlot*>(base + layout.slots_offset) + i;
    new (slot) ProcessSlot();
    status = initMutex(&slot->life);
  }
  ::munmap(p, layout.total_size);
  if (!status.ok()) return status;
  return fd;
}

common::Result<SharedArea> SharedArea::attach(int fd, uint64_t memory) {
  AreaLayout layout = layoutFor(memory);
  struct stat st;
  if (::fstat(fd, &st) != 0) return common::errnoStatus(errno, "fstat (cache area)");
  if (static_cast<uint64_t>(st.st_size) != layout.total_size) {
    return common::invalidArgument("cache area: its size does not fit cache.memory");
  }
  void* p = ::mmap(nullptr, layout.total_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return common::errnoStatus(errno, "mmap (cache area)");
  const auto* header = static_cast<const AreaHeader*>(p);
  if (header->magic != kAreaMagic || header->version != kAreaVersion ||
      header->block_size != kBlockSize || header->total_size != layout.total_size ||
      header->block_count != layout.block_count ||
      header->descriptor_count != layout.descriptor_count ||
      header->bucket_count != layout.bucket_count || header->process_slots != kProcessSlots) {
    ::munmap(p, layout.total_size);
    return common::invalidArgument("cache area: not made for this cache.memory");
  }
  return SharedArea(static_cast<char*>(p), layout);
}

SharedArea::SharedArea(SharedArea&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)), layout_(other.layout_) {}

SharedArea& SharedArea::operator=(SharedArea&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) ::munmap(base_, layout_.total_size);
    base_ = std::exchange(other.base_, nullptr);
    layout_ = other.layout_;
  }
  return *this;
}

SharedArea::~SharedArea() {
  if (base_ != nullptr) ::munmap(base_, layout_.total_size);
}

}  // namespace scalws::common::cache
