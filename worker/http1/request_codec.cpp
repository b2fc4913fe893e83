#include "worker/http1/request_codec.h"

#include "worker/http/header_field.h"
#include "worker/http1/parser_error_status.h"
#include "worker/http1/request_target.h"

namespace scalws::worker::http1 {
namespace {

RequestCodec* self(llhttp_t* p) {
  return static_cast<RequestCodec*>(p->data);
}

bool hasUpperCase(std::string_view s) {
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') return true;
  }
  return false;
}

}  // namespace

RequestCodec::RequestCodec(const CodecLimits& limits, RequestCodecCallbacks& callbacks,
                           Request& request)
    : limits_(limits), callbacks_(callbacks), request_(request) {
  llhttp_settings_init(&settings_);
  settings_.on_message_begin = &RequestCodec::onMessageBegin;
  settings_.on_method = &RequestCodec::onMethod;
  settings_.on_url = &RequestCodec::onUrl;
  settings_.on_header_field = &RequestCodec::onHeaderField;
  settings_.on_header_value = &RequestCodec::onHeaderValue;
  settings_.on_headers_complete = &RequestCodec::onHeadersComplete;
  settings_.on_body = &RequestCodec::onBody;
  settings_.on_chunk_header = &RequestCodec::onChunkHeader;
  settings_.on_chunk_extension_name = &RequestCodec::onChunkExtension;
  settings_.on_chunk_extension_value = &RequestCodec::onChunkExtension;
  settings_.on_message_complete = &RequestCodec::onMessageComplete;
  llhttp_init(&parser_, HTTP_REQUEST, &settings_);
  // Keep-alive is the connection's decision (it closes after a "Connection: close"
  // response and never parses further); the codec parses whatever it is given.
  llhttp_set_lenient_keep_alive(&parser_, 1);
  parser_.data = this;
  headers_.reserve(limits_.max_headers);
}

RequestCodec::DispatchResult RequestCodec::dispatch(const char* data, size_t len) {
  DispatchResult result;
  if (error_status_ != 0) return errorResult(result);
  if (len == 0) return result;
  if (phase_ == Phase::kIdle) {
    phase_ = Phase::kHead;
    head_start_ = data;
  }
  size_t head_end = scanning_head_ ? len : 0;  // head bytes in this call
  if (scanning_head_) {
    HeadScanner::Result scan = scanner_.feed(data, len);
    switch (scan.verdict) {
      case HeadScanner::Verdict::kNeedMore:
        break;
      case HeadScanner::Verdict::kHeadComplete:
        scanning_head_ = false;
        head_end = scan.consumed;
        break;
      case HeadScanner::Verdict::kBareCr:
        fail(400, "bare CR in request head");
        break;
      case HeadScanner::Verdict::kBareLf:
        fail(400, "bare LF in request head");
        break;
      case HeadScanner::Verdict::kControlChar:
        fail(400, "control character in request head");
        break;
      case HeadScanner::Verdict::kObsFold:
        fail(400, "obsolete line folding in request head");
        break;
    }
    if (error_status_ != 0) return errorResult(result);
  }
  if (undecided_error_ != HPE_OK) {
    // llhttp already refused the request line; these bytes only help decide the status.
    decideParserError(data + len);
    result.consumed = len;
    return error_status_ != 0 ? errorResult(result) : result;
  }
  // The head goes to llhttp on its own, so that the body's framing is known (from
  // completeHead) before any body byte is parsed.
  if (phase_ == Phase::kHead && !execute(data, 0, head_end, result)) return result;
  if (head_end == len) return result;
  if (!chunked_) {
    execute(data, head_end, len, result);
    return result;
  }
  ChunkedBodyScanner::Result frame = chunked_scanner_.feed(data + head_end, len - head_end);
  if (frame.verdict == ChunkedBodyScanner::Verdict::kError) {
    // Nothing of the bad framing reaches llhttp: it would have read it more leniently.
    fail(400, frame.error);
    result.consumed = head_end;
    return errorResult(result);
  }
  bool complete = frame.verdict == ChunkedBodyScanner::Verdict::kComplete;
  size_t body_end = complete ? head_end + frame.consumed : len;
  bool ok = execute(data, head_end, body_end, result);
  // llhttp must see the body end exactly where the scanner did: a message it ends earlier
  // or later would leave the two disagreeing on where the next request starts.
  bool llhttp_complete = !ok && result.outcome == Outcome::kMessageComplete;
  if (llhttp_complete != complete || (complete && result.consumed != body_end)) {
    if (result.outcome != Outcome::kError && result.outcome != Outcome::kStopped) {
      fail(400, "chunked body framing is ambiguous");
      return errorResult(result);
    }
  }
  return result;
}

bool RequestCodec::execute(const char* data, size_t from, size_t to, DispatchResult& result) {
  if (from == to) {
    result.consumed = to;
    return true;
  }
  llhttp_errno_t err = llhttp_execute(&parser_, data + from, to - from);
  if (err == HPE_OK) {
    result.consumed = to;
    return true;
  }
  const char* pos = llhttp_get_error_pos(&parser_);
  result.consumed = pos != nullptr ? static_cast<size_t>(pos - data) : to;
  if (err == HPE_PAUSED) {
    result.outcome = stopped_ ? Outcome::kStopped : Outcome::kMessageComplete;
    return false;
  }
  if (err == HPE_PAUSED_UPGRADE) {
    // An Upgrade request ends here like any other (Request::upgrade names what it asked
    // for); the connection becomes a tunnel only if its handler answers 101, and then it
    // no longer feeds this codec. Otherwise the request was served as a plain one.
    llhttp_resume_after_upgrade(&parser_);
    result.outcome = Outcome::kMessageComplete;
    return false;
  }
  if (error_status_ == 0) {
    // The last byte llhttp looked at (it points at the byte it refused); to > from here.
    const char* last =
        pos != nullptr && pos >= data + from && pos < data + to ? pos : data + to - 1;
    undecided_error_ = err;
    error_pos_ = last;
    decideParserError(data + to);
  }
  if (error_status_ == 0) {
    // The request line is refused but its status depends on bytes not received yet.
    result.outcome = Outcome::kNeedMore;
    result.consumed = to;
    return false;
  }
  errorResult(result);
  return false;
}

RequestCodec::DispatchResult& RequestCodec::errorResult(DispatchResult& result) const {
  result.outcome = Outcome::kError;
  result.error_status = error_status_;
  result.error_reason = error_reason_;
  return result;
}

RequestCodec::DispatchResult RequestCodec::finishEof() {
  DispatchResult result;
  if (phase_ == Phase::kIdle || error_status_ != 0) return result;
  result.outcome = Outcome::kError;
  result.error_status = 400;
  result.error_reason = "connection closed in the middle of a request";
  return result;
}

void RequestCodec::resume() {
  llhttp_resume(&parser_);
  scanner_.reset();
  scanning_head_ = true;
  chunked_ = false;
  phase_ = Phase::kIdle;
  stopped_ = false;
}

void RequestCodec::rebase(const char* old_base, const char* new_base) {
  auto move = [&](std::string_view& s) {
    if (s.data() != nullptr) s = std::string_view(new_base + (s.data() - old_base), s.size());
  };
  if (head_start_ != nullptr) head_start_ = new_base + (head_start_ - old_base);
  if (error_pos_ != nullptr) error_pos_ = new_base + (error_pos_ - old_base);
  move(method_);
  move(url_);
  for (HeaderField& h : headers_) {
    move(h.name);
    move(h.value);
  }
}

int RequestCodec::fail(uint16_t status, const char* reason) {
  undecided_error_ = HPE_OK;
  if (error_status_ == 0) {
    error_status_ = status;
    error_reason_ = reason;
  }
  return -1;
}

void RequestCodec::decideParserError(const char* available_end) {
  uint16_t status =
      statusForParserError(undecided_error_, head_start_, error_pos_, available_end, headers_);
  if (status == 0) return;
  fail(status, llhttp_get_error_reason(&parser_));
  undecided_error_ = HPE_OK;
}

void RequestCodec::extend(std::string_view& span, const char* at, size_t len) {
  if (span.data() == nullptr) {
    span = std::string_view(at, len);
  } else {
    // The caller keeps the head contiguous, so a continued span starts where it ended.
    span = std::string_view(span.data(), static_cast<size_t>(at + len - span.data()));
  }
}

int RequestCodec::onMessageBegin(llhttp_t* p) {
  RequestCodec* c = self(p);
  c->method_ = {};
  c->url_ = {};
  c->headers_.clear();
  c->header_bytes_ = 0;
  c->last_was_value_ = false;
  c->body_limit_ = UINT64_MAX;
  c->body_received_ = 0;
  c->chunk_extension_bytes_ = 0;
  return 0;
}

int RequestCodec::onMethod(llhttp_t* p, const char* at, size_t len) {
  extend(self(p)->method_, at, len);
  return 0;
}

int RequestCodec::onUrl(llhttp_t* p, const char* at, size_t len) {
  RequestCodec* c = self(p);
  extend(c->url_, at, len);
  if (c->url_.size() > c->limits_.max_request_line) return c->fail(414, "request target too long");
  return 0;
}

int RequestCodec::onHeaderField(llhttp_t* p, const char* at, size_t len) {
  RequestCodec* c = self(p);
  if (c->headers_.empty() || c->last_was_value_) {
    if (c->headers_.size() >= c->limits_.max_headers) return c->fail(431, "too many headers");
    c->headers_.push_back(HeaderField{});
    c->last_was_value_ = false;
  }
  extend(c->headers_.back().name, at, len);
  c->header_bytes_ += len;
  if (c->header_bytes_ > c->limits_.max_header_size) {
    return c->fail(431, "header section too large");
  }
  return 0;
}

int RequestCodec::onHeaderValue(llhttp_t* p, const char* at, size_t len) {
  RequestCodec* c = self(p);
  if (c->headers_.empty()) return c->fail(400, "header value without a name");
  c->last_was_value_ = true;
  HeaderField& h = c->headers_.back();
  if (h.value.data() == nullptr && len == 0) {
    h.value = std::string_view(at, 0);
  } else {
    extend(h.value, at, len);
  }
  c->header_bytes_ += len + 4;  // ": " and CRLF count against the section too
  if (c->header_bytes_ > c->limits_.max_header_size) {
    return c->fail(431, "header section too large");
  }
  return 0;
}

int RequestCodec::onHeadersComplete(llhttp_t* p) {
  return self(p)->completeHead();
}

int RequestCodec::completeHead() {
  Request& r = request_;
  r.resetForReuse();
  if (parser_.http_major != 1 || parser_.http_minor > 1) {
    return fail(505, "unsupported HTTP version");
  }
  r.version = parser_.http_minor == 0 ? HttpVersion::kHttp10 : HttpVersion::kHttp11;
  r.method_name = method_;
  r.method = methodFromName(method_);
  r.target = url_;

  std::string_view host_header;
  int host_count = 0;
  bool connection_close = false;
  bool connection_keep_alive = false;
  bool connection_upgrade = false;
  std::string_view upgrade;
  bool has_transfer_encoding = false;
  for (HeaderField& h : headers_) {
    if (!isToken(h.name)) return fail(400, "invalid header name");
    h.value = trimOws(h.value);
    switch (h.name.size()) {
      case 4:
        if (equalsIgnoreCase(h.name, "host")) {
          host_header = h.value;
          ++host_count;
        }
        break;
      case 6:
        if (equalsIgnoreCase(h.name, "expect")) {
          if (!equalsIgnoreCase(h.value, "100-continue")) return fail(417, "unsupported Expect");
          r.expect_continue = true;
        }
        break;
      case 7:
        if (equalsIgnoreCase(h.name, "upgrade")) upgrade = h.value;
        break;
      case 10:
        if (equalsIgnoreCase(h.name, "connection")) {
          connection_close |= headerListContains(h.value, "close");
          connection_keep_alive |= headerListContains(h.value, "keep-alive");
          connection_upgrade |= headerListContains(h.value, "upgrade");
        }
        break;
      case 17:
        if (equalsIgnoreCase(h.name, "transfer-encoding")) has_transfer_encoding = true;
        break;
      default:
        break;
    }
  }
  r.headers = std::span<const HeaderField>(headers_.data(), headers_.size());

  // RFC 9112 §3.2: exactly one valid Host in HTTP/1.1; at most one in HTTP/1.0.
  if (host_count > 1) return fail(400, "more than one Host header");
  if (host_count == 0 && r.version == HttpVersion::kHttp11) return fail(400, "missing Host header");

  RequestTarget target;
  if (!parseRequestTarget(url_, r.method, target)) return fail(400, "invalid request target");
  if (r.method == Method::kConnect) return fail(405, "CONNECT is not supported");
  r.raw_path = target.path;
  r.query = target.query;
  std::string_view host;
  if (host_count == 1) {
    bool valid = false;
    host = hostWithoutPort(host_header, valid);
    if (!valid) return fail(400, "invalid Host header");
  }
  // RFC 9112 §3.2.2: the absolute-form's authority wins over the Host header. Routes
  // would match one host while a handler (PHP's HTTP_HOST) saw the other, so a request
  // whose two hosts differ is refused rather than served on either.
  if (target.form == RequestTarget::Form::kAbsolute) {
    if (host_count == 1 && !equalsIgnoreCase(host, target.authority_host)) {
      return fail(400, "Host differs from the request target's authority");
    }
    host = target.authority_host;
  }
  if (hasUpperCase(host)) {
    char* lower = r.arena->allocate(host.size());
    for (size_t i = 0; i < host.size(); ++i) lower[i] = asciiLower(host[i]);
    host = std::string_view(lower, host.size());
  }
  r.host = host;

  if (has_transfer_encoding) {
    // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means the framing is faulty.
    if (r.version == HttpVersion::kHttp10) return fail(400, "Transfer-Encoding in HTTP/1.0");
    switch (classifyTransferEncoding(headers_)) {
      case TransferCodings::kChunkedOnly:
        break;
      case TransferCodings::kChunkedLastWithOthers:
        return fail(501, "unsupported transfer coding");
      case TransferCodings::kChunkedNotLast:
        return fail(400, "chunked is not the final transfer coding");
    }
  }
  r.chunked = (parser_.flags & F_CHUNKED) != 0;
  chunked_ = r.chunked;
  chunked_scanner_.reset();
  r.content_length = r.chunked ? 0 : parser_.content_length;
  r.has_body = r.chunked || ((parser_.flags & F_CONTENT_LENGTH) != 0 && parser_.content_length > 0);
  r.keep_alive = r.version == HttpVersion::kHttp11 ? !connection_close
                                                   : (connection_keep_alive && !connection_close);
  if (!r.has_body) r.expect_continue = false;
  // RFC 9110 §7.8: a client asks to switch protocols with Upgrade, named in Connection;
  // the switch comes at the end of the request, so only one without a body may ask. The
  // first protocol listed is the one a handler may accept (with a 101).
  if (connection_upgrade && !upgrade.empty() && !r.has_body && r.version == HttpVersion::kHttp11) {
    r.upgrade = trimOws(upgrade.substr(0, upgrade.find(',')));
  }

  phase_ = Phase::kBody;
  if (!callbacks_.onRequestHead(r)) {
    stopped_ = true;
    return HPE_PAUSED;
  }
  if (r.has_body && !r.chunked && r.content_length > body_limit_) {
    return fail(413, "request body larger than max_body");
  }
  return 0;
}

int RequestCodec::onBody(llhttp_t* p, const char* at, size_t len) {
  RequestCodec* c = self(p);
  c->body_received_ += len;
  if (c->body_received_ > c->body_limit_) return c->fail(413, "request body larger than max_body");
  c->callbacks_.onRequestBody(std::string_view(at, len));
  return 0;
}

int RequestCodec::onChunkHeader(llhttp_t* p) {
  RequestCodec* c = self(p);
  c->chunk_extension_bytes_ = 0;
  if (c->body_received_ + p->content_length > c->body_limit_) {
    return c->fail(413, "request body larger than max_body");
  }
  return 0;
}

int RequestCodec::onChunkExtension(llhttp_t* p, const char* at, size_t len) {
  (void)at;
  RequestCodec* c = self(p);
  c->chunk_extension_bytes_ += len;
  if (c->chunk_extension_bytes_ > c->limits_.max_chunk_extension) {
    return c->fail(400, "chunk extensions too long");
  }
  return 0;
}

int RequestCodec::onMessageComplete(llhttp_t* p) {
  RequestCodec* c = self(p);
  c->callbacks_.onRequestComplete();
  return HPE_PAUSED;
}

}  // namespace scalws::worker::http1
