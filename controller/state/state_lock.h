// StateLock: one controller per state directory.
//
// acquire() opens DIR/lock (creating it, mode 0644), takes flock(LOCK_EX | LOCK_NB) and
// writes the holder's PID into it, so a second controller on the same directory refuses
// to start with a message naming the PID that holds it. The lock lives as long as the
// open file description: it is released when the StateLock is destroyed or the process
// dies, however it dies, so no stale lock survives a crash. The file itself is left in
// place (unlinking it would let two processes lock two different inodes).
//
// The fd is close-on-exec: workers spawned by the controller must not inherit it, or a
// worker that outlives a crashed controller would keep the next controller from starting.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace scalws::controller::state {

class StateLock {
 public:
  // kFailedPrecondition when another process holds the lock ("... held by pid N ...");
  // errno-based errors when the directory or file cannot be opened.
  static common::Result<StateLock> acquire(const std::string& state_dir);

  // The PID written in DIR/lock, or 0 when the file is missing, empty or unreadable.
  // Only meaningful while someone holds the lock.
  static pid_t readHolderPid(const std::string& state_dir);

  StateLock(StateLock&& other) noexcept;
  StateLock& operator=(StateLock&& other) noexcept;
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;
  ~StateLock();

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

 private:
  StateLock(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace scalws::controller::state
