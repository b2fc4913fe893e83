#include "controller/server/control_server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>

#include "common/log.h"
#include "ipc/peer_credentials.h"
#include "ipc/unix_socket.h"
#include "ipc/uv_handle.h"

namespace scalws::controller {

using common::Result;
using common::UniqueFd;

namespace {

constexpr int kMaxAcceptsPerWakeup = 64;
constexpr size_t kMaxConnections = 256;

}  // namespace

Result<std::unique_ptr<ControlServer>> ControlServer::open(uv_loop_t* loop, const std::string& path,
                                                           ControlHandlers& handlers) {
  Result<UniqueFd> probe = ipc::connectUnix(path, std::chrono::milliseconds(200));
  if (probe.ok()) {
    return common::Status(common::StatusCode::kAlreadyExists,
                          "another controller answers on " + path);
  }
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  Result<UniqueFd> fd = ipc::listenUnix(path, 128);
  if (!fd.ok()) return fd.status();
  std::optional<gid_t> admin = ipc::lookupGroup(ipc::kAdminGroup);
  if (admin && ::chown(path.c_str(), static_cast<uid_t>(-1), *admin) != 0) {
    LOG_WARN("cannot give %s to group scalws: %s", path.c_str(), strerror(errno));
  }
  if (::chmod(path.c_str(), 0660) != 0) {
    return common::errnoStatus(errno, "chmod " + path);
  }
  std::unique_ptr<ControlServer> server(new ControlServer(loop, path, std::move(*fd), handlers));
  server->admin_gid_ = admin;
  server->poll_ = new uv_poll_t;
  uv_poll_init(loop, server->poll_, server->fd_.get());
  server->poll_->data = server.get();
  uv_poll_start(server->poll_, UV_READABLE, &ControlServer::onReadable);
  return server;
}

ControlServer::ControlServer(uv_loop_t* loop, std::string path, UniqueFd fd,
                             ControlHandlers& handlers)
    : loop_(loop), path_(std::move(path)), fd_(std::move(fd)), handlers_(handlers) {}

ControlServer::~ControlServer() {
  close();
}

void ControlServer::close() {
  if (poll_ != nullptr) {
    ipc::closeAndDelete(poll_);
    ::unlink(path_.c_str());
  }
  fd_.reset();
  connections_.clear();
}

void ControlServer::onReadable(uv_poll_t* handle, int status, int) {
  auto* self = static_cast<ControlServer*>(handle->data);
  if (status < 0) {
    LOG_WARN("control socket: %s", uv_strerror(status));
    return;
  }
  self->acceptAll();
}

void ControlServer::sweep() {
  connections_.remove_if([](const std::unique_ptr<ipc::Endpoint>& e) { return !e->isOpen(); });
}

void ControlServer::acceptAll() {
  sweep();
  for (int i = 0; i < kMaxAcceptsPerWakeup && fd_.valid(); ++i) {
    UniqueFd conn(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!conn) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN) LOG_WARN("control socket accept: %s", strerror(errno));
      return;
    }
    if (connections_.size() >= kMaxConnections) {
      LOG_WARN("control socket: %zu connections open; refusing one more", connections_.size());
      continue;
    }
    ipc::EndpointOptions options;
    options.local = ipc::Role::kController;
    options.peer = ipc::Role::kCtl;
    options.admin_gid = admin_gid_;
    Result<std::unique_ptr<ipc::Endpoint>> endpoint =
        ipc::Endpoint::create(loop_, std::move(conn), options);
    if (!endpoint.ok()) {
      LOG_WARN("control connection: %s", endpoint.status().message().c_str());
      continue;
    }
    common::Status registered = handlers_.registerOn(**endpoint);
    if (!registered.ok()) LOG_ERROR("control connection: %s", registered.message().c_str());
    // Freed at the next accept (sweep) or on close(); a closed endpoint holds no fd.
    (*endpoint)->onClose([](const common::Status&) {});
    connections_.push_back(std::move(endpoint).value());
  }
}

}  // namespace scalws::controller
