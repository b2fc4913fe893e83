// The one request path every protocol shares, from a parsed head to its answer and, once
// the response is over, to the access log and the counters. A protocol's adapter parses
// (HTTP/1.1's RequestCodec, HTTP/2's Session), fills the stream's Request (with its peer
// and loop), calls dispatch(), and calls account() when the exchange ends; it never
// routes.
//
// dispatch(), in order:
//   0. on a connection a shared address's front handed over, a host this instance does not
//      answer there gets 421 (worker/net/shared_hosts.h);
//   1. OPTIONS * (RFC 9110 §9.3.7) is answered with the methods we serve;
//   2. the path is normalised (percent-decoding, dot segments): 400 when it cannot be;
//   3. the router picks a route: 404 when none matches; a route with `rewrite` changes the
//      path (and query) and routing starts again, at most 10 times (then 500, logged);
//   4. the route's `limit` (its own or [site]'s, worker/limits/route_limit.h): 429 with
//      Retry-After for a client over the rate or with too many requests in flight. First
//      of the route's checks, so a flood of password guesses is refused before any hash
//      is computed; a route without a limit pays one pointer test. An admitted request
//      counted in flight holds its slot on the stream until its response ends;
//   5. the route's policy: a declared body over max_body gets 413 before the handler runs
//      (it must not answer a request we will not read), a peer outside `allow` gets 403;
//      the route's auth: 401 without valid credentials, or a wait for the password's hash
//      (then resume() takes over from step 6);
//   6. Expect: 100-continue is settled (HttpStream::onExpectContinue);
//   7. the route's handler runs.
// Before all of it (after the 421), with [real_ip], the client's address from a trusted
// proxy's header becomes the request's peer. Every error goes through sendError. The
// stream's body limit is the route's max_body (the server's when no route matched) once
// dispatch() returns.
//
// Response rules (headers, errors, compress: worker/response/): the route's, or for the
// 400, 404 and rewrite 500 given before a route matched, [site]'s. When they edit headers
// or compress, the handler (and the route's own 429/403/413) answers through a ResponseFilter
// instead of the stream; a route without rules gets the stream itself. Auth's 401 and 503
// go through answerError, so the route's rules apply to them too, as to the limit's 429.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "worker/http/header_field.h"

namespace scalws::worker {

class ConfigSnapshot;
class HttpStream;
class WorkerLoop;

class RequestDispatcher {
 public:
  static void dispatch(HttpStream& stream, const ConfigSnapshot& snapshot) noexcept;
  // An error found after routing (a body past max_body, a route's auth refusing) answered
  // with the response rules the request was dispatched with (request().response_rules):
  // its error page and header edits. No InFlight may be set on the stream any more (a
  // handler's aborted, an auth check's cleared).
  static void answerError(HttpStream& stream, uint16_t status, bool close,
                          std::span<const HeaderField> extra = {}) noexcept;
  // Steps 5 and 6 for a request whose checks finished later (an auth check on the thread
  // pool), on the loop: `early_body` is what the protocol delivered meanwhile, handed to
  // the handler's sink after it ran, with the body's end when `body_ended`.
  static void resume(HttpStream& stream, const ConfigSnapshot& snapshot, int route,
                     std::string_view early_body, bool body_ended) noexcept;
  // The exchange is over (its response finished, or a codec error was answered): one
  // access-log line and the loop's request counters.
  static void account(const HttpStream& stream, WorkerLoop& loop) noexcept;

 private:
  static void runHandler(HttpStream& stream, const ConfigSnapshot& snapshot, int route) noexcept;
};

}  // namespace scalws::worker
