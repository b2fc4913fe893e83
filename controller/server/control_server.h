// ControlServer: the control socket (/run/scalws/control.sock, mode 0660, group
// scalws when that group exists). Each scalwsctl connection gets an ipc::Endpoint whose
// handlers are ControlHandlers'; the endpoint refuses write ops from peers that are neither
// root nor in group scalws (SO_PEERCRED, ipc/peer_credentials.h).
//
// Opening refuses a path where another controller answers (connect succeeds), so two
// controllers with different state dirs cannot steal each other's socket; a stale socket
// file is replaced. close() stops accepting, drops every connection and unlinks the path.
#pragma once

#include <uv.h>

#include <list>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"
#include "controller/server/control_handlers.h"
#include "ipc/endpoint.h"

namespace scalws::controller {

class ControlServer {
 public:
  static common::Result<std::unique_ptr<ControlServer>> open(uv_loop_t* loop,
                                                             const std::string& path,
                                                             ControlHandlers& handlers);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  void close();
  size_t connections() const { return connections_.size(); }

 private:
  ControlServer(uv_loop_t* loop, std::string path, common::UniqueFd fd, ControlHandlers& handlers);
  static void onReadable(uv_poll_t* handle, int status, int events);
  void acceptAll();
  void sweep();  // frees endpoints whose channel closed

  uv_loop_t* loop_;
  std::string path_;
  common::UniqueFd fd_;
  ControlHandlers& handlers_;
  std::optional<gid_t> admin_gid_;
  uv_poll_t* poll_ = nullptr;
  std::list<std::unique_ptr<ipc::Endpoint>> connections_;
};

}  // namespace scalws::controller
