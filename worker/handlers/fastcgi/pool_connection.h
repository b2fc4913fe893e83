// One socket to a PHP pool, watched in its loop's SocketPoller. Reused across requests when
// the pool keeps connections (FCGI_KEEP_CONN); its PoolState owns it, lends it to one
// request at a time (the user) and takes it back.
//
// Lifetime: created by PoolState::connect(); close() stops it and the poller's closed
// callback closes the fd, tells the PoolState and frees the object. Events go to the user
// while lent; an idle connection reports any readiness (EOF, stray bytes) to its
// PoolState, which closes it.
#pragma once

#include <uv.h>

#include <cstdint>

#include "worker/net/backend_socket.h"

namespace scalws::worker::fastcgi {

class PoolState;

class PoolConnectionUser {
 public:
  virtual void onPoolConnected() noexcept = 0;
  virtual void onPoolConnectFailed(int err) noexcept = 0;
  // UV_READABLE / UV_WRITABLE; `status` < 0 when the poll itself failed.
  virtual void onPoolEvent(int status, int events) noexcept = 0;

 protected:
  ~PoolConnectionUser() = default;
};

class PoolConnection {
 public:
  enum class State { kConnecting, kIdle, kInUse, kClosing };

  // Starts a non-blocking connect. Null with `err` set when it failed at once.
  static PoolConnection* open(SocketPoller& poller, PoolState& pool, int& err);

  int fd() const { return socket_.fd(); }
  State state() const { return state_; }
  PoolState& pool() const { return pool_; }
  // Requests completed on this connection: above 0 it was reused.
  uint32_t requestsServed() const { return served_; }
  void countServed() { ++served_; }

  void lend(PoolConnectionUser* user);
  void makeIdle();
  void watch(bool readable, bool writable);
  void close();

  // PoolState's idle list.
  PoolConnection* idle_next = nullptr;
  PoolConnection* idle_prev = nullptr;

 private:
  explicit PoolConnection(PoolState& pool) : pool_(pool) {}
  ~PoolConnection() = default;
  static void onPoll(void* owner, int status, int events);
  static void onClosed(void* owner);

  PoolState& pool_;
  BackendSocket socket_;
  State state_ = State::kConnecting;
  PoolConnectionUser* user_ = nullptr;
  uint32_t served_ = 0;
};

}  // namespace scalws::worker::fastcgi
