// A request body of unknown length (HTTP/1.1 chunked, HTTP/2 or HTTP/3 without
// content-length) collected whole before a php route runs, since PHP needs CONTENT_LENGTH
// before the first body byte. The first kMemoryLimit bytes stay in memory; past them the
// body goes to an unnamed file (O_TMPFILE; where that is not supported, a file unlinked at
// once) in [server] temp_dir. max_body bounds it: the stream answers 413 past it and
// aborts the spool. A temp file that cannot be made or written gets the client a 500.
//
// Two phases:
//   collecting — the spool is the request's BodySink and the writer's InFlight; when the
//     body ends, the request's length is set (content_length, chunked = false) and the
//     PhpHandler's continuation starts the Exchange with the spool as its body;
//   replaying — the Exchange reads the body back as it would read the client's:
//     setPaused() is its setBodyReadPaused(), and the body reaches its BodySink in pieces of
//     at most kPiece bytes, so a large body streams to PHP at the pool socket's pace.
// release() ends it; it is deleted then, or once the piece being delivered returned.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/unique_fd.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"

namespace scalws::worker::fastcgi {

class BodySpool final : public InFlight, public BodySink {
 public:
  static constexpr size_t kMemoryLimit = 64 * 1024;
  static constexpr size_t kPiece = 16 * 1024;

  // Called once the body is whole (the request's length is set then), on the loop.
  using Ready = std::function<void(BodySpool& spool)>;

  // Starts collecting `request`'s body; `ready` continues the request with it.
  static void start(Request& request, ResponseWriter& writer, const std::string& temp_dir,
                    Ready ready);

  uint64_t size() const { return size_; }
  bool inFile() const { return file_.get() >= 0; }

  // Replaying: the body goes to `reader` (the Exchange) while not paused.
  void setReader(BodySink* reader) { reader_ = reader; }
  void setPaused(bool paused);
  void release();

  // Collecting: InFlight and BodySink.
  void abort() noexcept override;
  void onBodyData(std::string_view data) noexcept override;
  void onBodyEnd() noexcept override;

 private:
  BodySpool(Request& request, ResponseWriter& writer, const std::string& temp_dir, Ready ready)
      : request_(&request), writer_(&writer), temp_dir_(temp_dir), ready_(std::move(ready)) {}
  ~BodySpool() = default;

  bool store(std::string_view data);
  bool openFile();
  void fail(const char* what, int err);
  void pump();

  Request* request_;
  ResponseWriter* writer_;
  const std::string& temp_dir_;  // the snapshot's, which outlives the request
  Ready ready_;

  std::string memory_;
  common::UniqueFd file_;
  uint64_t size_ = 0;

  BodySink* reader_ = nullptr;
  uint64_t delivered_ = 0;
  std::unique_ptr<char[]> piece_;  // a file's piece on its way to the reader
  bool paused_ = true;
  bool pumping_ = false;
  bool released_ = false;
  bool end_sent_ = false;
};

}  // namespace scalws::worker::fastcgi
