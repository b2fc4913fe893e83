// The ResponseWriter a route's handler answers through when the route edits headers or
// compresses (ResponseRules::filtersResponses): it stands between the handler and the
// stream, edits the head, and compresses the body on its way, whatever made it (static,
// respond, status, PHP, the proxy and its cache, error pages). Routes without such rules
// never see one: the dispatcher hands their handlers the stream itself.
//
//   kHead ──sendHead──► kPassing      (nothing to compress: every call goes on unchanged)
//     │          └────► kCompressing  (the body goes through a Compressor)
//     └── finish/abortResponse, or the stream's abort ──► kFree (back to the loop's pool)
//
// Compression streams with bounded memory: a body handed over as bytes (sendBody) is
// compressed at once and its output queued on the stream; a file slice (sendFile) or a
// large retained body (sendBodyRetained: a cache entry) becomes pending input, read and
// compressed kChunk at a time while the stream holds less than kHighWater, then resumed
// from the stream's writable notification. The handler's own back-pressure works as
// without the filter: queuedBytes() is the stream's plus the pending input, and its
// WritableObserver is called once the pending input is done and the stream drained.
//
// Lifetime: pooled per loop (ResponseFilters). It is the stream's InFlight from attach()
// until the response ends, and passes abort() on to the handler's. It goes back to the
// pool before it hands the stream its last call (finish may start the next request on
// the connection, which may take this very object); an abort that arrives while it is
// inside a call to the stream is honoured once that call returns.
#pragma once

#include <memory>
#include <vector>

#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/loop/loop_local.h"
#include "worker/response/compress/compressor.h"
#include "worker/response/compress/compressor_pool.h"
#include "worker/response/response_rules.h"

namespace scalws::worker {

class ResponseFilters;

class ResponseFilter final : public ResponseWriter,
                             public InFlight,
                             public WritableObserver,
                             private compress::CompressedSink {
 public:
  // Output the stream may hold before pending input waits for it to drain, and how much
  // pending input is read and compressed at a time.
  static constexpr size_t kHighWater = 64 * 1024;
  static constexpr size_t kChunk = 16 * 1024;

  explicit ResponseFilter(ResponseFilters& home) : home_(home) {}

  // A filter of `request`'s loop put between the handler and `client`.
  static ResponseWriter& attach(Request& request, ResponseWriter& client,
                                const ResponseRules& rules);
  void start(Request& request, ResponseWriter& client, const ResponseRules& rules);

  // ResponseWriter: what the handler answers through.
  void sendHead(const ResponseHead& head) noexcept override;
  void sendBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void sendFile(const FileSlice& file) noexcept override;
  void sendBodyRetained(std::string_view data, RefCounted* owner) noexcept override;
  void finish() noexcept override;
  size_t queuedBytes() const noexcept override;
  void notifyWhenWritable(WritableObserver* observer) noexcept override;
  void setInFlight(InFlight* in_flight) noexcept override { handler_ = in_flight; }
  void setBodyReadPaused(bool paused) noexcept override;
  void abortResponse() noexcept override;

  // InFlight: the client went away.
  void abort() noexcept override;
  // WritableObserver: the stream drained.
  void onWritable() noexcept override;

  bool free() const { return state_ == State::kFree; }

 private:
  enum class State : uint8_t { kFree, kHead, kPassing, kCompressing, kDead };

  void onCompressed(std::string_view bytes) noexcept override;
  // Chooses the encoding; false to pass the response as it is.
  bool beginCompression(const ResponseHead& head, std::vector<HeaderField>& fields);
  // False once the response is dead (aborted, or the compressor failed).
  bool compress(std::string_view input, bool end);
  // Compresses pending input: while the stream holds less than kHighWater (`bounded`),
  // or all of it. False once the response is dead.
  bool pump(bool bounded);
  bool hasPending() const { return pending_left_ > 0; }
  void releasePending();
  // Ends the compressed stream and hands the client its finish.
  void finishCompressed();
  // The compressor failed or the pending file could not be read: the response is cut.
  void fail();
  // Leaves a call that may have seen an abort: recycles when it did.
  void leave();
  void recycle();

  ResponseFilters& home_;
  State state_ = State::kFree;
  uint32_t busy_ = 0;  // calls into the stream under way
  Request* request_ = nullptr;
  ResponseWriter* client_ = nullptr;
  const ResponseRules* rules_ = nullptr;
  InFlight* handler_ = nullptr;
  WritableObserver* observer_ = nullptr;  // the handler's, while compressing
  bool waiting_ = false;                  // we are the stream's observer
  bool finish_pending_ = false;
  std::unique_ptr<compress::Compressor> compressor_;
  // Pending input: a file slice (fd >= 0) or retained bytes.
  int pending_fd_ = -1;
  const char* pending_data_ = nullptr;
  uint64_t pending_offset_ = 0;
  uint64_t pending_left_ = 0;
  RefCounted* pending_owner_ = nullptr;
  std::vector<HeaderField> fields_;
};

// The loop's pool of filters, with what they share: the idle compressors and the buffer
// pending file input is read into.
class ResponseFilters final : public LoopLocal {
 public:
  explicit ResponseFilters(WorkerLoop&) {}
  ResponseFilters() = default;
  ResponseFilter& take();
  void recycle(ResponseFilter& filter) { free_.push_back(&filter); }
  compress::CompressorPool& compressors() { return compressors_; }
  char* readBuffer() { return read_buffer_; }
  size_t inUse() const { return all_.size() - free_.size(); }

 private:
  std::vector<std::unique_ptr<ResponseFilter>> all_;
  std::vector<ResponseFilter*> free_;
  compress::CompressorPool compressors_;
  char read_buffer_[ResponseFilter::kChunk];
};

}  // namespace scalws::worker
