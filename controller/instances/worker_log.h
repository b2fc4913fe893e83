// WorkerLog: a worker's stderr (and stdout), read by the controller from a pipe and written
// to the controller's log one line at a time, each line prefixed "instance NAME worker
// PID: " and escaped (common::printable), so nothing a worker writes can pass for a line of
// the controller's own. Lines are cut at kMaxLine bytes; past kLinesPerSecond (after a
// burst of kLineBurst) lines are dropped, and how many is said once lines flow again.
//
// A spawned worker gets the pipe at spawn (worker_spawn.h); a re-attached one is handed a
// new pipe with the `stderr` op (the old one died with the previous controller).
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/loop_handles.h"
#include "controller/token_bucket.h"

namespace scalws::controller {

class WorkerLog {
 public:
  static constexpr size_t kMaxLine = 2048;
  static constexpr double kLinesPerSecond = 50;
  static constexpr double kLineBurst = 200;

  // Where a finished line goes (prefix included); the default is the controller's log.
  using Sink = std::function<void(const std::string& line)>;

  WorkerLog(uv_loop_t* loop, std::string prefix, Sink sink = {});
  WorkerLog(const WorkerLog&) = delete;
  WorkerLog& operator=(const WorkerLog&) = delete;

  // Reads `read_end` (made non-blocking here) until it ends or close().
  common::Status start(common::UniqueFd read_end);
  void close();  // what was read so far is written first
  uint64_t dropped() const { return dropped_total_; }

 private:
  void onReadable();
  void line(std::string_view text);
  void piece(std::string_view text);

  uv_loop_t* loop_;
  std::string prefix_;
  Sink sink_;
  common::UniqueFd fd_;
  FdWatch watch_;
  TokenBucket rate_;
  std::string partial_;
  uint64_t dropped_ = 0;  // since the last line that went through
  uint64_t dropped_total_ = 0;
};

}  // namespace scalws::controller
