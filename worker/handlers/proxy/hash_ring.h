// Consistent hashing for balance = "hash": every primary server owns points on a ring of
// 32-bit hashes in proportion to its weight, and a key goes to the first point at or after
// its own hash. Removing a server (down) moves only the keys it owned, to the next server
// on the ring; the others keep theirs. Built once per upstream with the config snapshot
// and shared read-only by every loop.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace scalws::worker::proxy {

// 64-bit FNV-1a folded through a final mix: stable across processes and builds, so every
// worker of a site sends a key to the same server.
uint64_t hashKey(std::string_view key);

class HashRing {
 public:
  static constexpr uint32_t kPointsPerWeight = 40;
  static constexpr uint32_t kMaxPointsPerServer = 2000;

  struct Member {
    std::string_view name;  // stable identity (the server's address text)
    uint32_t weight = 1;
  };
  // Index i of `members` is the server index the ring answers with.
  explicit HashRing(std::span<const Member> members);
  HashRing() = default;

  bool empty() const { return points_.empty(); }
  // Walks the ring from `hash`: the first server `accept(index)` takes, or -1.
  template <typename Accept>
  int find(uint64_t hash, Accept&& accept) const {
    if (points_.empty()) return -1;
    size_t start = lowerBound(static_cast<uint32_t>(hash >> 32));
    for (size_t n = 0; n < points_.size(); ++n) {
      const Point& p = points_[(start + n) % points_.size()];
      if (accept(p.server)) return p.server;
    }
    return -1;
  }

 private:
  struct Point {
    uint32_t hash;
    int server;
  };
  size_t lowerBound(uint32_t hash) const;
  std::vector<Point> points_;
};

}  // namespace scalws::worker::proxy
