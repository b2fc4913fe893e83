#include "worker/handlers/proxy/hash_ring.h"

#include <algorithm>
#include <string>

namespace scalws::worker::proxy {

uint64_t hashKey(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  // MurmurHash3's fmix64: FNV alone leaves short keys' high bits poorly mixed.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

HashRing::HashRing(std::span<const Member> members) {
  for (size_t i = 0; i < members.size(); ++i) {
    uint32_t points = std::min(kMaxPointsPerServer, members[i].weight * kPointsPerWeight);
    std::string label(members[i].name);
    label += '#';
    size_t base = label.size();
    for (uint32_t p = 0; p < points; ++p) {
      label.resize(base);
      label += std::to_string(p);
      points_.push_back(Point{static_cast<uint32_t>(hashKey(label) >> 32), static_cast<int>(i)});
    }
  }
  std::sort(points_.begin(), points_.end(), [](const Point& a, const Point& b) {
    return a.hash != b.hash ? a.hash < b.hash : a.server < b.server;
  });
}

size_t HashRing::lowerBound(uint32_t hash) const {
  auto it = std::lower_bound(points_.begin(), points_.end(), hash,
                             [](const Point& p, uint32_t h) { return p.hash < h; });
  return it == points_.end() ? 0 : static_cast<size_t>(it - points_.begin());
}

}  // namespace scalws::worker::proxy
