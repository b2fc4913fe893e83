// The `php` action: finds the script a path runs (ScriptResolver), encodes the CGI params
// and hands the request to an Exchange on this loop's side of the route's pool. A body of
// unknown length is collected first (BodySpool), so PHP gets its CONTENT_LENGTH.
//
// Built with the config snapshot (which owns the PoolSpec it points to) and shared by every
// loop of the process; per-loop state lives in the loop's LoopPools.
#pragma once

#include <memory>
#include <string>

#include "common/config/site_config.h"
#include "common/status.h"
#include "worker/handlers/fastcgi/pool_spec.h"
#include "worker/handlers/fastcgi/script_resolver.h"
#include "worker/http/handler.h"

namespace scalws::worker::fastcgi {

class BodySpool;

class PhpHandler final : public Handler {
 public:
  // Opens the root (before the sandbox). `max_body` is the route's effective limit.
  // `temp_dir`: where bodies of unknown length wait once they outgrow memory; it must
  // outlive the handler (the snapshot's server config).
  static common::Result<std::unique_ptr<PhpHandler>> create(const common::config::PhpAction& action,
                                                            const PoolSpec& pool, uint64_t max_body,
                                                            std::string server_software,
                                                            const std::string& temp_dir);

  void handle(Request& request, ResponseWriter& writer) noexcept override;
  std::string_view actionName() const noexcept override { return "php"; }
  bool consumesBody() const noexcept override { return true; }

 private:
  PhpHandler(const PoolSpec& pool, ScriptResolver resolver, uint64_t max_body,
             std::string server_software, const std::string& temp_dir)
      : pool_(pool),
        resolver_(std::move(resolver)),
        max_body_(max_body),
        software_(std::move(server_software)),
        temp_dir_(temp_dir) {}

  // Sends the request (with its body from `spool`, when collected first) to the pool.
  void run(Request& request, ResponseWriter& writer, const ScriptMatch& script,
           BodySpool* spool) const;

  const PoolSpec& pool_;
  ScriptResolver resolver_;
  uint64_t max_body_;
  std::string software_;
  const std::string& temp_dir_;
};

}  // namespace scalws::worker::fastcgi
