// Fuzzes the stored-entry reader (worker/handlers/cache/stored_entry.h): the bytes of a
// disk file or of a memory-tier entry, written by another process that may have died
// halfway or by a disk that tore the write.
//
// Input: the entry's bytes. They are parsed whole (with and without the checksum) and as
// a meta; an entry that parses must write back to the same meta bytes, and its head must
// split into fields. The same bytes are then stored raw in a memory tier as one entry and
// looked up: the lookup must drop them or find an entry that parses, never crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "worker/handlers/cache/hash64.h"
#include "worker/handlers/cache/memory_store.h"
#include "worker/handlers/cache/stored_entry.h"

namespace {

using namespace scalws::worker::cache;

constexpr uint64_t kMemory = 1 << 20;

class AnyVary final : public VaryMatcher {
 public:
  bool matches(std::string_view) const override { return true; }
};

MemoryStore* memoryStore() {
  static std::unique_ptr<MemoryStore> store = [] {
    auto fd = SharedArea::create("fuzz-cache", kMemory);
    if (!fd.ok()) std::abort();
    auto s = MemoryStore::open(fd->release(), kMemory, kMemory / 2);
    if (!s.ok()) std::abort();
    return std::move(s).value();
  }();
  return store.get();
}

void checkParsed(std::string_view bytes, const EntryView& view) {
  std::string again(entryMetaSize(view.key, view.uri, view.vary, view.head), '\0');
  writeEntryMeta(view.info, view.key, view.uri, view.vary, view.head, again.data());
  if (bytes.substr(0, again.size()) != again) {
    std::fprintf(stderr, "a parsed entry does not write back to its bytes\n");
    std::abort();
  }
  scalws::worker::HeaderField fields[kMaxStoredFields];
  size_t count = 0;
  if (!splitStoredHead(view.head, fields, count)) {
    std::fprintf(stderr, "a parsed entry's head does not split\n");
    std::abort();
  }
}

void throughMemory(std::string_view bytes) {
  MemoryStore& store = *memoryStore();
  store.removePrefix("");
  // The key the lookup asks for: the input's own, when it says one, else anything.
  std::string key = "k";
  uint64_t key_hash = 1;
  if (auto meta = parseEntryMeta(bytes); meta.ok()) {
    key = std::string(meta->key);
    key_hash = meta->info.key_hash;
  }
  MemoryStore::Fill fill;
  if (!store.beginFill(key_hash, 2, 0, fill)) std::abort();
  if (!store.append(fill, bytes, 0)) {
    store.abandon(fill);
    return;
  }
  store.commit(fill, 2, 0);
  MemoryStore::Hit hit;
  AnyVary any;
  if (store.lookup(key_hash, key, any, 64, 0, hit).found == MemoryStore::Found::kHit) {
    if (!parseEntryMeta(hit.meta).ok()) {
      std::fprintf(stderr, "a hit's meta does not parse\n");
      std::abort();
    }
    store.unpin(hit.pin);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (bool verify : {true, false}) {
    auto whole = parseEntry(bytes, verify);
    if (whole.ok()) checkParsed(bytes, *whole);
  }
  auto meta = parseEntryMeta(bytes);
  if (meta.ok()) checkParsed(bytes, *meta);
  throughMemory(bytes);
  return 0;
}
