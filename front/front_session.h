// FrontSession: the front's side of the controller channel (`scalws-front --address ADDR
// --ipc-fd N --attach-fd M`), and the process around its FrontLoop.
//
// The conversation is ipc/front_messages.h's: front.hello → front.config (+ the listening
// socket) → the sandbox → front.ready, then front.route / front.unroute as instances come
// and go, front.metrics once a second, front.stop. A route's descriptors must be
// SOCK_SEQPACKET unix sockets (anything else refuses the route); an update replaces one
// instance's entry in a new table, swapped in at once (route_table.h).
//
// Like a worker, a front outlives its controller: when the channel closes after it
// serves, it keeps routing with the table it has and waits on its attach socket (abstract,
// made by the controller before exec). A new controller connects there — accepted only
// from uid 0 or the uid that configured it, and only while no channel is open — and gets a
// hello with `attached` set: its settings and the descriptor numbers of its listener and
// channels, which the controller copies (pidfd_getfd) and checks itself. A channel that
// closes before the front serves ends it.
//
// Single-threaded: everything runs on one uv loop.
#pragma once

#include <uv.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"
#include "front/front_loop.h"
#include "ipc/endpoint.h"
#include "ipc/handler_table.h"

namespace scalws::front {

class FrontSession {
 public:
  enum class State { kHello, kAwaitConfig, kGoingLive, kServing, kStopping, kClosed };

  FrontSession(uv_loop_t* loop, std::string address, common::UniqueFd channel,
               common::UniqueFd attach);
  ~FrontSession();
  FrontSession(const FrontSession&) = delete;
  FrontSession& operator=(const FrontSession&) = delete;

  // Opens the channel and says hello. An error means nothing started.
  common::Status start();
  // A graceful stop asked by a signal (as front.stop).
  void requestStop();
  int exitCode() const { return exit_code_; }
  State state() const { return state_; }

 private:
  common::Status openChannel(common::UniqueFd fd, bool attached);
  ipc::FrontHelloArgs hello(bool attached) const;
  void onConfig(ipc::Incoming& request, ipc::Replier replier);
  void onRoute(ipc::Incoming& request, ipc::Replier replier);
  void onUnroute(ipc::Incoming& request, ipc::Replier replier);
  void onStop(ipc::Incoming& request, ipc::Replier replier);
  void onStderr(ipc::Incoming& request, ipc::Replier replier);
  void goLive();
  void sendMetrics();
  void onChannelClosed(const common::Status& why);
  void acceptAttach();
  void fail(const std::string& why);
  void close();

  uv_loop_t* loop_;
  std::string address_;
  State state_ = State::kHello;
  common::UniqueFd channel_fd_;
  std::unique_ptr<ipc::Endpoint> endpoint_;
  common::UniqueFd attach_fd_;
  std::string attach_address_;
  uv_poll_t* attach_poll_ = nullptr;  // freed by its close callback
  uv_timer_t* timer_ = nullptr;       // go-live, then the metrics period; freed on close
  uv_signal_t* signals_ = nullptr;    // SIGTERM, SIGINT; freed on close

  ipc::FrontSettings settings_;
  uid_t controller_uid_ = 0;
  common::UniqueFd listener_;  // until goLive hands it to the loop
  common::UniqueFd udp_;       // the same, with settings_.quic
  std::unique_ptr<FrontLoop> front_;
  std::shared_ptr<InstanceRoute> staging_;  // a route whose parts are still coming
  int exit_code_ = 0;

  static const ipc::OpHandler<FrontSession> kHandlers[];
};

}  // namespace scalws::front
