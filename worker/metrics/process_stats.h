// CPU time and RSS of the calling process, readable from inside the sandbox: the
// /proc/self/statm descriptor is opened before it (Landlock hides /proc afterwards).
#pragma once

#include <cstdint>

namespace scalws::worker {

class ProcessStats {
 public:
  ProcessStats();  // opens /proc/self/statm: call in the process it describes
  ~ProcessStats();
  ProcessStats(const ProcessStats&) = delete;
  ProcessStats& operator=(const ProcessStats&) = delete;

  uint64_t cpuMicros() const;  // utime + stime of every thread (getrusage)
  uint64_t rssBytes() const;   // 0 when statm could not be opened

 private:
  int statm_fd_ = -1;
};

}  // namespace scalws::worker
