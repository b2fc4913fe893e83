#include "worker/handlers/fastcgi/php_handler.h"

#include "worker/handlers/fastcgi/body_spool.h"
#include "worker/handlers/fastcgi/cgi_params.h"
#include "worker/handlers/fastcgi/exchange.h"
#include "worker/handlers/fastcgi/loop_pools.h"
#include "worker/http/error_response.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::fastcgi {

common::Result<std::unique_ptr<PhpHandler>> PhpHandler::create(
    const common::config::PhpAction& action, const PoolSpec& pool, uint64_t max_body,
    std::string server_software, const std::string& temp_dir) {
  common::Result<ScriptResolver> resolver =
      ScriptResolver::open(action.root, action.index, action.front_controller.value_or(""));
  if (!resolver.ok()) return resolver.status();
  return std::unique_ptr<PhpHandler>(new PhpHandler(pool, std::move(resolver).value(), max_body,
                                                    std::move(server_software), temp_dir));
}

void PhpHandler::handle(Request& request, ResponseWriter& writer) noexcept {
  if (request.has_body && !request.chunked && request.content_length > max_body_) {
    // The codec answers 413 as soon as this returns; starting PHP would be wasted.
    return;
  }
  ScriptMatch script;
  if (!resolver_.resolve(request.path, *request.arena, script)) {
    sendError(request, writer, 404);
    return;
  }
  if (request.has_body && request.chunked) {
    // CONTENT_LENGTH must be known before the body streams to PHP: collect it first.
    BodySpool::start(request, writer, temp_dir_,
                     [this, &request, &writer, script](BodySpool& spool) {
                       run(request, writer, script, &spool);
                     });
    return;
  }
  run(request, writer, script, nullptr);
}

void PhpHandler::run(Request& request, ResponseWriter& writer, const ScriptMatch& script,
                     BodySpool* spool) const {
  LoopPools& pools = request.loop->local<LoopPools>();
  std::string& params = pools.paramsScratch();
  params.clear();
  appendCgiParams(params, request, script, CgiSite{resolver_.root(), software_});
  PoolState& pool = pools.stateFor(pool_);
  pools.takeExchange().start(request, writer, pool, params, spool);
}

}  // namespace scalws::worker::fastcgi
