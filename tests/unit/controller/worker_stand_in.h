// What the controller's process tests play a worker with: a sleeping child as its process,
// and the worker's end of a channel whose other end the test gives the controller's side.
#pragma once

#include <unistd.h>
#include <uv.h>

#include <memory>
#include <utility>

#include "common/status.h"
#include "common/unique_fd.h"
#include "ipc/endpoint.h"
#include "ipc/unix_socket.h"

namespace scalws::testing {

// A child that sleeps until it is killed; its pid in the parent.
inline pid_t forkSleeper() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    _exit(0);
  }
  return pid;
}

struct WorkerChannel {
  common::UniqueFd controller_end;
  std::unique_ptr<ipc::Endpoint> worker_end;
};

inline common::Result<WorkerChannel> workerChannel(uv_loop_t* loop) {
  auto pair = ipc::socketPair();
  if (!pair.ok()) return pair.status();
  ipc::EndpointOptions o;
  o.local = ipc::Role::kWorker;
  o.peer = ipc::Role::kController;
  auto e = ipc::Endpoint::create(loop, std::move(pair->second), o);
  if (!e.ok()) return e.status();
  return WorkerChannel{std::move(pair->first), std::move(*e)};
}

}  // namespace scalws::testing
