#include "worker/http/stream_snapshots.h"

namespace scalws::worker {

const ConfigSnapshot& StreamSnapshots::forNewStream(
    const std::shared_ptr<const ConfigSnapshot>& latest) {
  if (latest != current_.snapshot && previous_.streams == 0) {
    previous_ = std::move(current_);
    current_ = Ref{latest, 0};
    if (previous_.streams == 0) previous_.snapshot.reset();
  }
  ++current_.streams;
  return *current_.snapshot;
}

void StreamSnapshots::release(const ConfigSnapshot* snapshot) {
  if (snapshot == nullptr) return;
  if (previous_.snapshot && snapshot == previous_.snapshot.get()) {
    if (--previous_.streams == 0) previous_.snapshot.reset();
  } else if (current_.streams > 0) {
    --current_.streams;
  }
}

}  // namespace scalws::worker
