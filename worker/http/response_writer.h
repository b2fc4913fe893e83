// The one interface handlers answer through, for HTTP/1.1 and HTTP/2 alike.
//
// Contract: sendHead once, then any number of sendBody / sendFile, then finish. The writer
// adds Date, Server, Content-Length (or chunked framing) and connection management itself;
// for HEAD requests it sends the head and drops the body. Views passed in are copied before
// the call returns unless the lifetime is kStable (the bytes outlive the response: e.g. a
// config snapshot the connection holds). Calls after the connection died are ignored; an
// async handler learns about that through InFlight::abort().
//
// Tunnels: to a request with Request::upgrade, a head with status 101 switches the
// exchange to a byte tunnel (HTTP/1.1 sends the 101 as given; HTTP/2 answers an extended
// CONNECT with 200, RFC 8441 §5). From then on what the client sends reaches the request's
// BodySink unframed (onBodyEnd when it stops sending), sendBody() bytes reach the client
// unframed, and finish() ends the tunnel after what is queued left. setBodyReadPaused()
// and queuedBytes() work as for bodies; the connection's own timeouts no longer apply.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "worker/http/header_field.h"
#include "worker/http/ref_counted.h"

namespace scalws::worker {

enum class BodyLifetime { kCopy, kStable };

struct ResponseHead {
  uint16_t status = 200;
  std::span<const HeaderField> headers;    // views valid for the call only
  std::optional<uint64_t> content_length;  // nullopt: streamed, length unknown
  bool close_connection = false;           // e.g. after an error the request cannot recover
};

// A slice of an open file to send (sendfile on plain sockets). The writer retains `owner`
// (the open-file cache entry) until the bytes left, so eviction cannot close the fd early.
struct FileSlice {
  int fd = -1;
  uint64_t offset = 0;
  uint64_t length = 0;
  RefCounted* owner = nullptr;
};

// The per-request state of an asynchronous handler (proxy, FastCGI). abort() is called
// when the client went away before finish(); the writer must not be used afterwards.
class InFlight {
 public:
  virtual void abort() noexcept = 0;

 protected:
  ~InFlight() = default;
};

class WritableObserver {
 public:
  virtual void onWritable() noexcept = 0;

 protected:
  ~WritableObserver() = default;
};

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;

  virtual void sendHead(const ResponseHead& head) noexcept = 0;
  virtual void sendBody(std::string_view data, BodyLifetime lifetime) noexcept = 0;
  virtual void sendFile(const FileSlice& file) noexcept = 0;
  // Body bytes that stay valid while `owner` is retained (a pinned cache entry): the
  // writer retains it until the bytes left, so they go out without a copy where the
  // protocol allows. The default copies them.
  virtual void sendBodyRetained(std::string_view data, RefCounted* owner) noexcept {
    (void)owner;
    sendBody(data, BodyLifetime::kCopy);
  }
  virtual void finish() noexcept = 0;
  // An interim (1xx) answer ahead of the final head (RFC 9110 §15.2), e.g. the 103 Early
  // Hints an upstream sent; only before sendHead, never 100 or 101 (Expect and upgrades
  // are the writer's own). A writer whose client cannot take one drops it (HTTP/1.0
  // clients, §15.2), as does the default.
  virtual void sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept {
    (void)status;
    (void)headers;
  }

  // Bytes accepted but not yet taken by the kernel. Streaming producers stop above their
  // watermark and ask to be called once the queue drained.
  virtual size_t queuedBytes() const noexcept = 0;
  virtual void notifyWhenWritable(WritableObserver* observer) noexcept = 0;
  virtual void setInFlight(InFlight* in_flight) noexcept = 0;

  // Request-body flow control for handlers that stream the body on (a BodySink whose
  // consumer is slower than the client). While paused the connection reads no more of the
  // body from the client; bytes it already read are still delivered, so a sink must accept
  // up to one read buffer more (HTTP/1.1) or the stream's flow-control window (HTTP/2:
  // the client may send that much before it has to wait). Unpausing takes effect from the next loop
  // turn; the body timeout does not run while paused. A no-op for writers that cannot pause.
  virtual void setBodyReadPaused(bool paused) noexcept { (void)paused; }
  // Ends a response that cannot be completed after its head went out (the upstream broke
  // mid-body): the connection closes without the final chunk, so the client sees a cut
  // response instead of a complete-looking short one. InFlight::abort() is not called.
  // The default finishes normally, for writers without a way to signal it.
  virtual void abortResponse() noexcept { finish(); }

  // Head, body and finish in one call: what fast handlers use.
  void respond(uint16_t status, std::span<const HeaderField> headers, std::string_view body,
               BodyLifetime lifetime) noexcept;
};

}  // namespace scalws::worker
