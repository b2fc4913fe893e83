#include "worker/http/request_dispatcher.h"

#include <uv.h>

#include "worker/access_log.h"
#include "worker/config_snapshot.h"
#include "worker/http/error_response.h"
#include "worker/http/http_stream.h"
#include "worker/http/path_normalizer.h"
#include "worker/loop/worker_loop.h"
#include "worker/net/shared_hosts.h"
#include "worker/response/response_filter.h"

namespace scalws::worker {
namespace {

// The writer a response goes through: the stream itself, or a ResponseFilter when
// `rules` edit headers or compress. Routes without rules pay one pointer test.
ResponseWriter& writerFor(HttpStream& stream, Request& r, const ResponseRules* rules) {
  if (rules == nullptr) return stream;
  r.response_rules = rules;
  if (!rules->filtersResponses() || r.loop == nullptr) return stream;
  return ResponseFilter::attach(r, stream, *rules);
}

}  // namespace

void RequestDispatcher::dispatch(HttpStream& stream, const ConfigSnapshot& snap) noexcept {
  Request& r = stream.request_;
  stream.body_limit_ = snap.server().max_body;
  // RFC 9110 §15.5.20: a request for a host another instance answers on this shared
  // address (a coalesced HTTP/2 connection, a keep-alive one that switched Host).
  if (r.peer != nullptr && r.peer->shared_hosts != nullptr &&
      !r.peer->shared_hosts->serves(r.host)) {
    sendError(r, stream, 421);
    return;
  }
  if (r.method == Method::kOptions && r.target == "*") {
    const HeaderField allow[] = {{"Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH"}};
    stream.respond(200, allow, {}, BodyLifetime::kStable);
    return;
  }
  PathNormalization norm = normalizePath(r.raw_path, *r.arena);
  if (!norm.ok) {
    sendError(r, writerFor(stream, r, snap.siteResponseRules()), 400, {}, true);
    return;
  }
  r.path = norm.path;

  int route = snap.router().match(r);
  if (route < 0) {
    sendError(r, writerFor(stream, r, snap.siteResponseRules()), 404);
    return;
  }
  r.route = &snap.route(route);
  ResponseWriter& writer = writerFor(stream, r, snap.responseRules(route));
  uint64_t max_body = snap.maxBody(route);
  stream.body_limit_ = max_body;
  if (r.has_body && !r.chunked && r.content_length > max_body) {
    sendError(r, writer, 413, {}, true);
    return;
  }
  if (r.peer != nullptr && !snap.policyAllows(route, *r.peer)) {
    sendError(r, writer, 403);
    return;
  }
  Handler* handler = snap.handler(route);
  stream.handler_ = handler;
  stream.action_ = snap.action(route);
  if (r.expect_continue) stream.onExpectContinue(handler->consumesBody());
  handler->handle(r, writer);
}

void RequestDispatcher::answerError(HttpStream& stream, uint16_t status, bool close) noexcept {
  Request& r = stream.request_;
  sendError(r, writerFor(stream, r, r.response_rules), status, {}, close);
}

void RequestDispatcher::account(const HttpStream& stream, WorkerLoop& loop) noexcept {
  const Request& r = stream.request_;
  uint64_t us = r.start_ns != 0 ? (uv_hrtime() - r.start_ns) / 1000 : 0;
  loop.counters().countRequest(stream.status_, stream.action_, us);
  if (AccessLog* log = loop.accessLog(); log != nullptr) {
    log->record(r, stream.status_, stream.body_bytes_, stream.handler_);
  }
}

}  // namespace scalws::worker
