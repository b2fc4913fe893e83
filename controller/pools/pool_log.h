// PoolLog: a managed php-fpm master's log, bounded. PHP run by tenants writes what it
// likes to stderr (catch_workers_output hands it to the master), so the master never
// writes to a file on the state disk itself: its error_log, stdout and stderr are a FIFO,
// <state dir>/pools/NAME/php-fpm.pipe, which the controller reads and copies to
// php-fpm.log. When php-fpm.log would pass `cap` bytes it becomes php-fpm.log.1 (the
// previous .1 goes) and a new php-fpm.log starts: a pool's log takes at most 2 x cap.
//
// A FIFO rather than an anonymous pipe: an adopted master (left serving by a previous
// controller) still holds the FIFO it opened, and its lines reach the new controller as
// soon as that one opens the FIFO again. While no controller reads, php-fpm's writes fail
// (EPIPE; php-fpm ignores SIGPIPE) and those lines are lost. The controller holds the FIFO
// open read-write, so it never sees an end of file between two masters. While it runs but
// does not read (busy for longer than the FIFO's kPipeBytes take), php-fpm's writes wait:
// a noisy pool slows itself, never the controller.
//
// A write that fails (a full disk: ENOSPC) drops the data, counts it, and says so in the
// controller's log once per episode; the next write that works notes how much was lost.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/loop_handles.h"

namespace scalws::controller {

inline constexpr uint64_t kDefaultPoolLogCap = 4 * 1024 * 1024;
inline constexpr uint64_t kMinPoolLogCap = 64 * 1024;
inline constexpr int kPipeBytes = 256 * 1024;  // the FIFO's buffer

class PoolLog {
 public:
  PoolLog(uv_loop_t* loop, std::string name, std::string pipe_path, std::string log_path,
          uint64_t cap);
  PoolLog(const PoolLog&) = delete;
  PoolLog& operator=(const PoolLog&) = delete;

  // Makes the FIFO (keeping one that is there: an adopted master may hold it) and reads
  // it. Idempotent; a master must not be started before this succeeded (its open of the
  // FIFO would wait for a reader).
  common::Status open();
  void close();  // reads what is buffered first
  // Copies what the FIFO holds now (before reading the log of a master that just exited).
  void drain() { onReadable(); }
  bool isOpen() const { return static_cast<bool>(fd_); }
  uint64_t droppedBytes() const { return dropped_total_; }

  // Appends `data` to the log, rotating first when it would pass the cap (public for tests).
  void append(std::string_view data);

 private:
  void onReadable();
  bool ensureFile();
  void rotate();

  std::string name_;
  std::string pipe_path_;
  std::string log_path_;
  uint64_t cap_;
  common::UniqueFd fd_;    // the FIFO, read-write
  common::UniqueFd file_;  // php-fpm.log, append
  uint64_t size_ = 0;      // of php-fpm.log
  FdWatch watch_;
  bool failing_ = false;  // the last write failed (said once in the controller's log)
  uint64_t dropped_ = 0;  // since the last write that worked
  uint64_t dropped_total_ = 0;
};

// The last `max_bytes` of the file at `path` (read from the end, never the whole file),
// starting at a line; "" when it cannot be read.
std::string readFileTail(const std::string& path, size_t max_bytes);

}  // namespace scalws::controller
