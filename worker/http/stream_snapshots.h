// The config snapshots a multiplexed connection's streams use. A reload must not change
// the rules under a request already running, yet a long-lived HTTP/2 or HTTP/3 connection
// must not pin an old config for ever: streams already running keep theirs, new ones move
// to the loop's current snapshot as soon as at most one older snapshot is still in use.
#pragma once

#include <cstdint>
#include <memory>

namespace scalws::worker {

class ConfigSnapshot;

class StreamSnapshots {
 public:
  explicit StreamSnapshots(std::shared_ptr<const ConfigSnapshot> current)
      : current_{std::move(current), 0} {}

  // The snapshot a new stream runs with, given the loop's current one; counted until
  // release().
  const ConfigSnapshot& forNewStream(const std::shared_ptr<const ConfigSnapshot>& latest);
  // A stream that had `snapshot` (or none yet: nullptr) is over.
  void release(const ConfigSnapshot* snapshot);
  // The newest this connection took (its timeouts and limits).
  const ConfigSnapshot& current() const { return *current_.snapshot; }

 private:
  struct Ref {
    std::shared_ptr<const ConfigSnapshot> snapshot;
    uint32_t streams = 0;
  };

  Ref current_;
  Ref previous_;
};

}  // namespace scalws::worker
