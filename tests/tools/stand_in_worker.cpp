// A stand-in for `scalwsd --instance NAME --ipc-fd 3 --attach-fd 4` in the controller's
// tests: it speaks the worker's side of ipc/worker_messages.h and serves nothing (it holds
// the listener fds it is given, enters no sandbox). Built as bin/stand-in/scalwsd, so the
// controller's /proc checks take it for a worker.
//
// By default it behaves: hello, takes config and listeners, says ready with an empty
// sandbox report, sends `metrics` every 200 ms, exits 0 on `stop`, keeps running when the
// controller goes and answers a controller that attaches with what it was told. Flags in
// SCALWS_STAND_IN (comma-separated) make it misbehave:
//   refuse            ready {ok:false}
//   silent            hello, then nothing (never ready)
//   exit-after-ready  exits 3 a second after ready (its siblings are ready by then, even
//                     in a sanitized build)
//   lie-on-attach     to a controller that attaches: a config and pools it never got
//   bad-sandbox       ready with a sandbox report of the wrong shape, holding escapes
//   escape-sandbox    ready with a well-formed report whose strings hold terminal escapes
//   metrics-flood     1000 metrics a second, every tenth over 64 KiB
//   forge-log         lines on stderr dressed as the controller's
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/hex.h"
#include "common/unique_fd.h"
#include "ipc/endpoint.h"
#include "ipc/worker_messages.h"

namespace {

using scalws::common::Result;
using scalws::common::UniqueFd;
using scalws::ipc::Json;
namespace ipc = scalws::ipc;

// The attach socket's abstract name, hex-encoded (as the worker reports it).
std::string attachAddress(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  size_t n = len > sizeof(sa_family_t) + 1 ? len - sizeof(sa_family_t) - 1 : 0;
  return scalws::common::toHex(std::string_view(addr.sun_path + 1, n));
}

std::set<std::string> flags() {
  std::set<std::string> out;
  const char* env = std::getenv("SCALWS_STAND_IN");
  std::stringstream in(env != nullptr ? env : "");
  for (std::string flag; std::getline(in, flag, ',');) out.insert(flag);
  return out;
}

class StandIn {
 public:
  StandIn(uv_loop_t* loop, std::string instance, int attach_fd)
      : loop_(loop), instance_(std::move(instance)), attach_(attach_fd), flags_(flags()) {}

  int open(UniqueFd channel, bool attached) {
    ipc::EndpointOptions o;
    o.local = ipc::Role::kWorker;
    o.peer = ipc::Role::kController;
    auto e = ipc::Endpoint::create(loop_, std::move(channel), o);
    if (!e.ok()) return 1;
    endpoint_ = std::move(*e);
    endpoint_->onClose([this](const scalws::common::Status&) {
      if (!ready_) std::exit(1);  // no controller before serving: nothing to do
    });
    auto ok = [this](const char* op, auto fn) { (void)endpoint_->registerHandler(op, fn); };
    ok("config", [this](const ipc::Message& m, std::vector<UniqueFd>, ipc::Replier r) {
      Result<ipc::ConfigArgs> c = ipc::ConfigArgs::decode(m.args);
      if (!c.ok()) return r.fail(c.status());
      settings_ = c->settings;
      r.ok();
    });
    ok("listeners", [this](const ipc::Message& m, std::vector<UniqueFd> fds, ipc::Replier r) {
      Result<ipc::ListenersArgs> l = ipc::ListenersArgs::decode(m.args);
      if (!l.ok()) return r.fail(l.status());
      for (size_t i = 0; i < fds.size() && i < l->listeners.size(); ++i) {
        listeners_.push_back({l->listeners[i], fds[i].get()});
        held_.push_back(std::move(fds[i]));
      }
      r.ok();
      sayReady();
    });
    ok("reload", [this](const ipc::Message& m, std::vector<UniqueFd>, ipc::Replier r) {
      Result<ipc::ReloadArgs> args = ipc::ReloadArgs::decode(m.args);
      if (!args.ok()) return r.fail(args.status());
      settings_.config = args->config;
      settings_.config_path = args->config_path;
      settings_.php_pools = args->php_pools;
      r.ok();
    });
    ok("stop", [](const ipc::Message&, std::vector<UniqueFd>, ipc::Replier r) {
      r.ok();
      std::exit(0);
    });
    ipc::HelloArgs hello{::getpid(), instance_, attachAddress(attach_), std::nullopt};
    if (attached) {
      ipc::WorkerSettings told = settings_;
      if (flags_.count("lie-on-attach")) {
        told.config =
            "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nstatic = { root = \"/\" }\n";
        told.php_pools = {{"main", "tcp:127.0.0.1:9", 0, 0}};
      }
      hello.attached = ipc::HelloArgs::Attached{false, told, listeners_, {}};
    }
    return endpoint_->request("hello", hello.encode(), {}, [](Result<Json>) {}).ok() ? 0 : 1;
  }

  void watchAttach() {
    if (attach_ < 0) return;
    uv_poll_init(loop_, &attach_poll_, attach_);
    attach_poll_.data = this;
    uv_poll_start(&attach_poll_, UV_READABLE, [](uv_poll_t* p, int, int) {
      auto* self = static_cast<StandIn*>(p->data);
      UniqueFd conn(::accept4(self->attach_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!conn || (self->endpoint_ && self->endpoint_->isOpen())) return;
      self->open(std::move(conn), true);
    });
  }

 private:
  void sayReady() {
    ipc::ReadyArgs ready;
    if (flags_.count("refuse")) {
      ready.error = "the stand-in refuses";
      (void)endpoint_->request("ready", ready.encode(), {}, [](Result<Json>) { std::exit(1); });
      return;
    }
    ready.ok = true;
    ready.pid = ::getpid();
    ready.loops = settings_.loops;
    ready.listeners = listeners_;
    ready.sandbox.mode = "off";  // it enters none, and says so
    if (flags_.count("escape-sandbox")) {
      // Well formed, but every string made to work on a terminal or a log.
      ready.sandbox.user = "\x1b[2J\x1b[31mroot";
      ready.sandbox.landlock_paths = {{"\x1b]0;owned\x07/", "read_write"}};
      ready.sandbox.degraded = {"nothing\nscalws-controller: forged line"};
    }
    Json args = ready.encode();
    if (flags_.count("bad-sandbox")) {
      args["sandbox"] = {{"identity", {{"user", 7}, {"uid", "root\x1b[31m"}}},
                         {"no_new_privs", "yes"},
                         {"landlock", {{"paths", "\x1b]0;owned\x07"}}},
                         {"seccomp", {{"action", {{"nested", true}}}}},
                         {"degraded", {1, "line\nscalws-controller: forged"}}};
    }
    ready_ = true;
    (void)endpoint_->request("ready", std::move(args), {}, [this](Result<Json>) {
      if (flags_.count("exit-after-ready")) {
        uv_timer_init(loop_, &exit_timer_);
        uv_timer_start(
            &exit_timer_, [](uv_timer_t*) { std::exit(3); }, 1000, 0);
      }
      if (flags_.count("forge-log")) {
        std::fprintf(stderr, "scalws-controller[1]: instance other: started by the operator\n");
        std::fflush(stderr);
      }
      startMetrics();
    });
  }

  void startMetrics() {
    uv_timer_init(loop_, &metrics_timer_);
    metrics_timer_.data = this;
    bool flood = flags_.count("metrics-flood") != 0;
    uv_timer_start(
        &metrics_timer_,
        [](uv_timer_t* t) {
          auto* self = static_cast<StandIn*>(t->data);
          if (!self->endpoint_ || !self->endpoint_->isOpen()) return;
          int burst = self->flags_.count("metrics-flood") ? 10 : 1;
          for (int i = 0; i < burst; ++i) {
            ++self->sent_;
            ipc::MetricsArgs m;
            m.pid = ::getpid();
            m.slot = self->settings_.slot;
            m.metrics.requests_by_class[1] = self->sent_;
            m.metrics.requests_by_action[0] = self->sent_;
            m.metrics.latency[3] = self->sent_;
            Json args = m.encode();
            if (burst > 1 && self->sent_ % 10 == 0) args["padding"] = std::string(70'000, 'x');
            (void)self->endpoint_->notify("metrics", std::move(args));
          }
        },
        flood ? 10 : 200, flood ? 10 : 200);
  }

  uv_loop_t* loop_;
  std::string instance_;
  int attach_;
  std::set<std::string> flags_;
  std::unique_ptr<ipc::Endpoint> endpoint_;
  ipc::WorkerSettings settings_;
  std::vector<ipc::ListenerReport> listeners_;
  std::vector<UniqueFd> held_;
  bool ready_ = false;
  uint64_t sent_ = 0;
  uv_poll_t attach_poll_{};
  uv_timer_t metrics_timer_{};
  uv_timer_t exit_timer_{};
};

}  // namespace

int main(int argc, char** argv) {
  std::string instance;
  int ipc_fd = -1;
  int attach_fd = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string arg = argv[i];
    if (arg == "--instance") instance = argv[i + 1];
    if (arg == "--ipc-fd") ipc_fd = std::atoi(argv[i + 1]);
    if (arg == "--attach-fd") attach_fd = std::atoi(argv[i + 1]);
  }
  if (instance.empty() || ipc_fd < 0) {
    std::fprintf(stderr, "stand-in: --instance NAME --ipc-fd N [--attach-fd M]\n");
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  uv_loop_t loop;
  uv_loop_init(&loop);
  StandIn stand_in(&loop, instance, attach_fd);
  stand_in.watchAttach();
  if (flags().count("silent")) {
    // Hello on the raw socket and then nothing: a worker that never gets ready.
    ipc::EndpointOptions o;
    o.local = ipc::Role::kWorker;
    o.peer = ipc::Role::kController;
    auto e = ipc::Endpoint::create(&loop, UniqueFd(ipc_fd), o);
    if (!e.ok()) return 1;
    ipc::HelloArgs hello{::getpid(), instance, "", std::nullopt};
    (void)(*e)->request("hello", hello.encode(), {}, [](Result<Json>) {});
    uv_run(&loop, UV_RUN_DEFAULT);
    return 0;
  }
  if (stand_in.open(UniqueFd(ipc_fd), false) != 0) return 1;
  uv_run(&loop, UV_RUN_DEFAULT);
  return 0;
}
