// FifoLog: the log of a child the controller runs (a managed php-fpm master, an app),
// bounded. Tenants' code writes what it likes to stderr, so such a child never writes to
// a file on the state disk itself: its stdout and stderr (and php-fpm's error_log) are a
// FIFO, e.g. <state dir>/pools/NAME/php-fpm.pipe, which the controller reads and copies to
// the log file, e.g. php-fpm.log. When the log would pass `cap` bytes it is renamed to
// LOG.1 (the previous .1 goes) and a new LOG starts: a child's log takes at most 2 x cap,
// and no line is lost to the rotation (the controller is the only writer of the file).
// A read from the FIFO can end inside a line: the controller copies whole lines, and holds
// the piece until the rest arrives (up to kMaxHeldLine; a longer line is copied in pieces),
// so a rotation never splits a line between LOG.1 and LOG.
//
// A FIFO rather than an anonymous pipe: an adopted child (left serving by a previous
// controller) still holds the FIFO it opened, and its lines reach the new controller as
// soon as that one opens the FIFO again. The controller holds the FIFO open read-write, so
// it never sees an end of file between two children. While it runs but does not read (busy
// for longer than the FIFO's kPipeBytes take), the child's writes wait: a noisy child slows
// itself, never the controller. While no controller runs, a child that holds no read end of
// its own gets EPIPE (php-fpm ignores it and those lines are lost); one that holds one
// (apps: app_process.h) waits once the FIFO is full.
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

inline constexpr uint64_t kMinLogCap = 64 * 1024;
// Where a managed pool's php-fpm.log and an app's app.log rotate unless the controller's
// --pool-log-size and --app-log-size say otherwise.
inline constexpr uint64_t kDefaultPoolLogCap = 4 * 1024 * 1024;
inline constexpr uint64_t kDefaultAppLogCap = 16 * 1024 * 1024;
inline constexpr int kPipeBytes = 256 * 1024;  // the FIFO's buffer
inline constexpr size_t kMaxHeldLine = 16 * 1024;

class FifoLog {
 public:
  // `who` names the child in the controller's own log ("pool main", "app api").
  FifoLog(uv_loop_t* loop, std::string who, std::string pipe_path, std::string log_path,
          uint64_t cap);
  FifoLog(const FifoLog&) = delete;
  FifoLog& operator=(const FifoLog&) = delete;

  // Makes the FIFO (keeping one that is there: an adopted child may hold it) and reads
  // it. Idempotent; a child must not be started before this succeeded (its open of the
  // FIFO would wait for a reader).
  common::Status open();
  void close();  // reads what is buffered first
  // Copies what the FIFO holds now, a last unfinished line too (before reading the log of
  // a child that just exited).
  void drain();
  bool isOpen() const { return static_cast<bool>(fd_); }
  const std::string& path() const { return log_path_; }
  uint64_t droppedBytes() const { return dropped_total_; }

  // Appends `data` to the log, rotating first when it would pass the cap (public for tests).
  void append(std::string_view data);
  // What the FIFO gave: its whole lines are appended, an unfinished one is held.
  void copyLines(std::string_view chunk);

 private:
  void onReadable();
  bool ensureFile();
  void rotate();

  std::string who_;
  std::string pipe_path_;
  std::string log_path_;
  uint64_t cap_;
  common::UniqueFd fd_;    // the FIFO, read-write
  common::UniqueFd file_;  // the log, append
  uint64_t size_ = 0;      // of the log
  std::string held_;       // the start of a line whose end has not been read yet
  FdWatch watch_;
  bool failing_ = false;  // the last write failed (said once in the controller's log)
  uint64_t dropped_ = 0;  // since the last write that worked
  uint64_t dropped_total_ = 0;
};

// The last `max_bytes` of the file at `path` (read from the end, never the whole file),
// starting at a line; "" when it cannot be read.
std::string readFileTail(const std::string& path, size_t max_bytes);
// The last three lines within the last `max_bytes` of the log at `path`, joined with '|'
// on one line: why a start failed, quoted in the answer to the command that started it.
std::string lastLogLines(const std::string& path, size_t max_bytes);

}  // namespace scalws::controller
