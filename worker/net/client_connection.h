// What a loop needs from any client connection, whatever its protocol (HTTP/1.1 now;
// TLS and HTTP/2 alongside): a place in the loop's list and the two ways to end it.
#pragma once

namespace scalws::worker {

class ClientConnection {
 public:
  virtual ~ClientConnection() = default;
  // Graceful stop: close now when idle, else after the requests in progress.
  virtual void beginShutdown() = 0;
  // Immediate close (the shutdown deadline passed).
  virtual void forceClose() = 0;

  // The loop's intrusive list; only WorkerLoop touches these.
  ClientConnection* next_in_loop = nullptr;
  ClientConnection* prev_in_loop = nullptr;
};

}  // namespace scalws::worker
