// Parses the records a FastCGI application sends back (STDOUT, STDERR, END_REQUEST) from
// bytes the caller read (codecs never touch a socket). Content is delivered as
// views into the bytes given to dispatch(), valid during the callback only; records may be
// split anywhere across dispatch() calls.
//
// Anything this client never asked for is malformed: a version other than 1, a request id
// other than kRequestId (management records included), a record type other than STDOUT,
// STDERR or END_REQUEST, an END_REQUEST whose length is not 8. After an error or after
// END_REQUEST the parser stops; reset() readies it for the next request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "worker/handlers/fastcgi/record.h"

namespace scalws::worker::fastcgi {

class RecordParserCallbacks {
 public:
  virtual void onStdout(std::string_view data) = 0;
  virtual void onStderr(std::string_view data) = 0;
  virtual void onEndRequest(uint32_t app_status, ProtocolStatus status) = 0;

 protected:
  ~RecordParserCallbacks() = default;
};

class RecordParser {
 public:
  enum class Outcome {
    kNeedMore,  // everything consumed; the request is not over
    kEnd,       // END_REQUEST parsed; `consumed` stops right after it
    kError,     // malformed; `error` says why. The connection cannot be trusted any more.
  };
  struct Result {
    Outcome outcome = Outcome::kNeedMore;
    size_t consumed = 0;
    const char* error = "";
  };

  explicit RecordParser(RecordParserCallbacks& callbacks) : callbacks_(callbacks) {}

  Result dispatch(const char* data, size_t len);
  void reset();

 private:
  enum class State { kHeader, kContent, kPadding, kDone, kFailed };

  Result fail(const char* why, size_t consumed);
  const char* checkHeader() const;

  RecordParserCallbacks& callbacks_;
  State state_ = State::kHeader;
  uint8_t header_[kHeaderSize] = {};
  size_t header_len_ = 0;
  RecordHeader current_;
  size_t content_left_ = 0;
  size_t padding_left_ = 0;
  uint8_t end_body_[8] = {};  // END_REQUEST content, gathered across splits
  size_t end_len_ = 0;
  const char* error_ = "";
};

}  // namespace scalws::worker::fastcgi
