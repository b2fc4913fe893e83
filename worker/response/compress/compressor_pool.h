// A loop's idle compressors, so a response does not pay a compressor's set-up (zlib's is
// two allocations of 128 KiB that glibc serves with mmap, and munmap on release) when one
// with the same parameters served an earlier response.
//
// Bounded: at most kMaxIdle compressors wait; the one idle longest goes first. A
// compressor whose library cannot reset it (brotli) is never kept.
#pragma once

#include <memory>
#include <vector>

#include "worker/response/compress/compressor.h"

namespace scalws::worker::compress {

// One per loop (held by the loop's ResponseFilters), never shared.
class CompressorPool {
 public:
  static constexpr size_t kMaxIdle = 8;

  // An idle compressor with these parameters, or a new one; null when the library refused.
  std::unique_ptr<Compressor> take(const Compressor::Params& params);
  // Back after its stream ended or was abandoned.
  void give(std::unique_ptr<Compressor> compressor);

  size_t idle() const { return idle_.size(); }

 private:
  std::vector<std::unique_ptr<Compressor>> idle_;  // oldest first
};

}  // namespace scalws::worker::compress
