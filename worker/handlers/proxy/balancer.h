// Chooses the server for a request among the candidates (servers up and not yet tried for
// it), by the upstream's balance mode:
// - round_robin: smooth weighted round robin (nginx's): over any run of requests each
//   server gets its weight's share, interleaved rather than in bursts;
// - least_conn: fewest requests in flight relative to weight, ties in turn;
// - hash: the key's point on the consistent ring (hash_ring.h), walking on past servers
//   that are not candidates; backups, which own no points, in turn;
// - random_two: two candidates drawn at random (by weight), the less loaded one taken
//   ("the power of two choices").
// One Balancer per upstream per loop (loop thread only); it holds only the rotation and
// random state, the loads are the caller's.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "worker/handlers/proxy/upstream_spec.h"

namespace scalws::worker::proxy {

class Balancer {
 public:
  explicit Balancer(uint64_t seed = 0x9e3779b97f4a7c15ull);

  // `candidates`: bit i set when server i may take the request. `active[i]`: requests in
  // flight on server i. `key_hash`: hashKey() of the request's key (hash mode with a key).
  // The chosen index, or -1 when there is no candidate.
  int pick(const UpstreamSpec& spec, uint64_t candidates, std::span<const uint32_t> active,
           const uint64_t* key_hash);

 private:
  int roundRobin(const UpstreamSpec& spec, uint64_t candidates);
  int leastConn(const UpstreamSpec& spec, uint64_t candidates, std::span<const uint32_t> active);
  int randomTwo(const UpstreamSpec& spec, uint64_t candidates, std::span<const uint32_t> active);
  int weightedDraw(const UpstreamSpec& spec, uint64_t candidates);
  uint64_t next();

  std::vector<int64_t> current_;  // smooth round robin's running weights
  uint32_t rotor_ = 0;
  uint64_t rng_;
};

}  // namespace scalws::worker::proxy
