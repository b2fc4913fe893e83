// StateDisk: is there room left on the filesystem of the state directory?
//
// state.db lives there, and so do the managed pools' logs (bounded: fifo_log.h). When that
// filesystem fills up (something else on it, or a cap set too high) SQLite refuses every
// commit with SQLITE_FULL and rolls it back: the state on disk stays whole and every change
// an operator asks for fails with "database or disk is full (No space left on device)"
// (sqliteStatus). StateDisk makes that visible before and while it happens: the
// controller checks once a second (and at every `status`), logs each change between
// "ok" and "full", and `scalwsctl status` shows it. Once space returns, changes work again
// with nothing else to do.
//
// Full: fewer than kFullBelowBytes free for root (f_bfree), or no free inode.
#pragma once

#include <cstdint>
#include <string>

#include "ipc/message.h"

namespace scalws::controller::state {

class StateDisk {
 public:
  static constexpr uint64_t kFullBelowBytes = 256 * 1024;

  explicit StateDisk(std::string dir) : dir_(std::move(dir)) {}

  // Looks again (statvfs); logs a change between ok and full. Returns full().
  bool check();
  bool full() const { return full_; }
  // {full, free_bytes, free_inodes, message}; message is "" when not full.
  ipc::Json status() const;

 private:
  std::string dir_;
  bool checked_ = false;
  bool full_ = false;
  uint64_t free_bytes_ = 0;
  uint64_t free_inodes_ = 0;
  std::string error_;  // statvfs's, if it failed
};

}  // namespace scalws::controller::state
