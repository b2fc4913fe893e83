#include "worker/http/request_dispatcher.h"

#include <uv.h>

#include <charconv>
#include <string>

#include "common/log.h"
#include "worker/access_log.h"
#include "worker/auth/basic_auth.h"
#include "worker/config_snapshot.h"
#include "worker/http/error_response.h"
#include "worker/http/http_stream.h"
#include "worker/http/path_normalizer.h"
#include "worker/http/real_ip.h"
#include "worker/http/rewrite.h"
#include "worker/limits/route_limit.h"
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

// nginx's bound: a rewrite that keeps matching routes that rewrite is a loop.
constexpr int kMaxRewrites = 10;

// The route for the request's path, with the route's regex groups when it has one.
int matchRoute(Request& r, const ConfigSnapshot& snap, common::RegexCaptures*& captures) {
  if (!snap.router().hasRegex()) return snap.router().match(r);
  if (captures == nullptr) captures = r.arena->make<common::RegexCaptures>();
  int route = snap.router().match(r, captures);
  r.captures = route >= 0 && snap.route(route).match.regex ? captures : nullptr;
  return route;
}

// The route's `limit`: true when the request may go on (then `verdict` says which slot it
// holds in flight, if any), false when it was answered 429.
bool admitLimited(HttpStream& stream, Request& r, const limits::RouteLimit& limit,
                  limits::SharedLimits& table, limits::LimitVerdict& verdict) {
  verdict = limits::checkLimit(limit, table, r, common::limits::monotonicNs());
  if (verdict.status == 0) return true;
  // RFC 6585 §4: a 429 may say how long to wait in Retry-After (RFC 9110 §10.2.3).
  char* digits = r.arena->allocate(16);
  char* end = std::to_chars(digits, digits + 16, verdict.retry_after_s).ptr;
  const HeaderField retry[] = {
      {"Retry-After", std::string_view(digits, static_cast<size_t>(end - digits))}};
  sendError(r, writerFor(stream, r, r.response_rules), verdict.status, retry);
  return false;
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
  // Before anything judges or logs the client.
  if (snap.site().real_ip) applyRealIp(*snap.site().real_ip, r);
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

  common::RegexCaptures* captures = nullptr;
  int route = matchRoute(r, snap, captures);
  for (int rewrites = 0; route >= 0 && snap.route(route).rewrite; ++rewrites) {
    const common::config::RouteConfig& rule = snap.route(route);
    const char* problem = rewrites == kMaxRewrites ? "more than 10 rewrites (a rewrite loop)"
                                                   : applyRewrite(r, *rule.rewrite, rewrites == 0);
    if (problem != nullptr) {
      LOG_ERROR("request %llx: rewrite at %s: %s; path \"%.*s\"",
                static_cast<unsigned long long>(r.id), rule.where.toString().c_str(), problem,
                static_cast<int>(r.path.size()), r.path.data());
      sendError(r, writerFor(stream, r, snap.siteResponseRules()), 500);
      return;
    }
    route = matchRoute(r, snap, captures);
  }
  if (route < 0) {
    sendError(r, writerFor(stream, r, snap.siteResponseRules()), 404);
    return;
  }
  r.route = &snap.route(route);
  // The filter (when the rules need one) is attached only by whoever answers: an error
  // here, or the handler in runHandler (perhaps after an auth check resumed it).
  r.response_rules = snap.responseRules(route);
  uint64_t max_body = snap.maxBody(route);
  stream.body_limit_ = max_body;
  if (const limits::RouteLimit* limit = snap.limit(route); limit != nullptr) {
    limits::LimitVerdict verdict;
    if (!admitLimited(stream, r, *limit, *snap.limitTable(), verdict)) return;
    if (verdict.slot != 0) stream.holdLimit(snap.limitTable(), verdict.slot, verdict.key);
  }
  if (r.has_body && !r.chunked && r.content_length > max_body) {
    sendError(r, writerFor(stream, r, r.response_rules), 413, {}, true);
    return;
  }
  if (r.peer != nullptr && !snap.policyAllows(route, *r.peer)) {
    sendError(r, writerFor(stream, r, r.response_rules), 403);
    return;
  }
  if (const BasicAuth* auth = snap.auth(route);
      auth != nullptr && auth->admit(r, stream, snap, route) != BasicAuth::Outcome::kAllowed) {
    return;  // answered, or resume() goes on once the password is checked
  }
  runHandler(stream, snap, route);
}

void RequestDispatcher::runHandler(HttpStream& stream, const ConfigSnapshot& snap,
                                   int route) noexcept {
  Request& r = stream.request_;
  Handler* handler = snap.handler(route);
  stream.handler_ = handler;
  stream.action_ = snap.action(route);
  if (r.expect_continue) stream.onExpectContinue(handler->consumesBody());
  handler->handle(r, writerFor(stream, r, snap.responseRules(route)));
}

void RequestDispatcher::answerError(HttpStream& stream, uint16_t status, bool close,
                                    std::span<const HeaderField> extra) noexcept {
  Request& r = stream.request_;
  sendError(r, writerFor(stream, r, r.response_rules), status, extra, close);
}

void RequestDispatcher::resume(HttpStream& stream, const ConfigSnapshot& snap, int route,
                               std::string_view early_body, bool body_ended) noexcept {
  stream.beginResumedDispatch();
  stream.setBodyReadPaused(false);
  runHandler(stream, snap, route);
  if (!early_body.empty()) stream.deliverBody(early_body);
  if (body_ended) stream.deliverBodyEnd();
  stream.endResumedDispatch();
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
