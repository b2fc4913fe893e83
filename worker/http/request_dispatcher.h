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
//   3. the router picks a route: 404 when none matches;
//   4. the route's policy: a declared body over max_body gets 413 before the handler runs
//      (it must not answer a request we will not read), a peer outside `allow` gets 403;
//   5. Expect: 100-continue is settled (HttpStream::onExpectContinue);
//   6. the route's handler runs.
// Every error goes through sendError. The stream's body limit is the route's max_body
// (the server's when no route matched) once dispatch() returns.
//
// Response rules (headers, errors, compress: worker/response/): the route's, or for the
// 400 and 404 given before a route matched, [site]'s. When they edit headers or compress,
// the handler (and the route's own 403/413) answers through a ResponseFilter instead of
// the stream; a route without rules gets the stream itself.
#pragma once

#include <cstdint>

namespace scalws::worker {

class ConfigSnapshot;
class HttpStream;
class WorkerLoop;

class RequestDispatcher {
 public:
  static void dispatch(HttpStream& stream, const ConfigSnapshot& snapshot) noexcept;
  // An error the connection finds after dispatch (a body past max_body) answered with the
  // response rules the request was dispatched with (request().response_rules): its error
  // page and header edits. The handler's InFlight must have been aborted already.
  static void answerError(HttpStream& stream, uint16_t status, bool close) noexcept;
  // The exchange is over (its response finished, or a codec error was answered): one
  // access-log line and the loop's request counters.
  static void account(const HttpStream& stream, WorkerLoop& loop) noexcept;
};

}  // namespace scalws::worker
