#include "worker/http3/stream.h"

#include <cstring>

#include "worker/http/decimal.h"
#include "worker/http/method.h"
#include "worker/http/status_text.h"
#include "worker/http1/request_target.h"
#include "worker/http3/session.h"

namespace scalws::worker::http3 {
namespace {

// RFC 9114 §4.2: connection-specific fields are malformed in HTTP/3. Content-Length is the
// writer's to set, from ResponseHead.
bool droppedResponseField(std::string_view name) {
  static constexpr std::string_view kDropped[] = {
      "connection",        "keep-alive", "proxy-connection",
      "transfer-encoding", "upgrade",    "content-length",
  };
  for (std::string_view d : kDropped) {
    if (equalsIgnoreCase(name, d)) return true;
  }
  return false;
}

std::string_view viewOf(nghttp3_rcbuf* buf) {
  nghttp3_vec v = nghttp3_rcbuf_get_buf(buf);
  return std::string_view(reinterpret_cast<const char*>(v.base), v.len);
}

// The same host (case-insensitive) and, where both name one, the same port.
bool sameAuthority(std::string_view a, std::string_view b) {
  bool valid_a = false;
  bool valid_b = false;
  std::string_view host_a = http1::hostWithoutPort(a, valid_a);
  std::string_view host_b = http1::hostWithoutPort(b, valid_b);
  if (!valid_a || !valid_b || !equalsIgnoreCase(host_a, host_b)) return false;
  std::string_view port_a = a.substr(host_a.size());
  std::string_view port_b = b.substr(host_b.size());
  return port_a.empty() || port_b.empty() || port_a == port_b;
}

// A stream's response body waiting for acknowledgements wakes a paused producer once this
// little is left unacknowledged.
constexpr uint64_t kWritableBelow = 64 * 1024;

}  // namespace

Stream::Stream(Session& session) : HttpStream(1024), session_(session), body_(session.buffers()) {
  headers_.reserve(16);
  held_.reserve(32);
  nva_.reserve(12);
}

void Stream::start(int64_t id, bool early) {
  id_ = id;
  early_ = early;
}

void Stream::recycle() {
  for (nghttp3_rcbuf* b : held_) nghttp3_rcbuf_decref(b);
  held_.clear();
  body_.clear();
  reset();
  request_.resetForReuse();
  headers_.clear();
  nva_.clear();
  method_ = path_ = authority_ = {};
  header_bytes_ = 0;
  header_count_ = 0;
  request_error_ = 0;
  early_ = false;
  request_state_ = RequestState::kHead;
  body_received_ = 0;
  unconsumed_ = 0;
  data_ = DataState::kNone;
  snapshot = nullptr;
  server_header = {};
  id_ = -1;
}

void Stream::addHeader(int32_t token, nghttp3_rcbuf* name_buf, nghttp3_rcbuf* value_buf) {
  std::string_view name = viewOf(name_buf);
  std::string_view value = viewOf(value_buf);
  // RFC 9114 §4.2.2: a field's size is its name, its value and 32 bytes.
  header_bytes_ += name.size() + value.size() + 32;
  if (request_error_ != 0) return;
  const SessionSettings& limits = session_.settings();
  if (header_bytes_ > limits.max_field_section || ++header_count_ > limits.max_headers + 4) {
    request_error_ = 431;  // keep counting (the bomb check), stop storing
    return;
  }
  if (!nghttp3_rcbuf_is_static(name_buf)) {
    nghttp3_rcbuf_incref(name_buf);
    held_.push_back(name_buf);
  }
  nghttp3_rcbuf_incref(value_buf);
  held_.push_back(value_buf);
  // nghttp3 has checked the pseudo-header set (RFC 9114 §4.3.1): each at most once, before
  // the regular fields, only request ones, names lower-case.
  switch (token) {
    case NGHTTP3_QPACK_TOKEN__METHOD:
      method_ = value;
      return;
    case NGHTTP3_QPACK_TOKEN__PATH:
      path_ = value;
      return;
    case NGHTTP3_QPACK_TOKEN__AUTHORITY:
      authority_ = value;
      return;
    default:
      break;
  }
  if (!name.empty() && name.front() == ':') return;  // :scheme, :protocol
  headers_.push_back(HeaderField{name, value});
}

void Stream::finishHead(bool end_stream) {
  Request& r = request_;
  r.version = HttpVersion::kHttp3;
  r.keep_alive = true;
  r.method_name = method_;
  r.method = methodFromName(method_);
  r.target = path_;
  size_t q = path_.find('?');
  r.raw_path = path_.substr(0, q);
  r.query = q == std::string_view::npos ? std::string_view() : path_.substr(q + 1);

  // RFC 9114 §4.2.1: cookie crumbs are joined with "; " before anything else sees them.
  size_t cookies = 0;
  size_t cookie_bytes = 0;
  for (const HeaderField& h : headers_) {
    if (h.name == "cookie") {
      ++cookies;
      cookie_bytes += h.value.size() + 2;
    }
  }
  if (cookies > 1) {
    char* joined = arena_.allocate(cookie_bytes);
    size_t len = 0;
    size_t first = headers_.size();
    for (size_t i = 0; i < headers_.size();) {
      if (headers_[i].name != "cookie") {
        ++i;
        continue;
      }
      if (len > 0) {
        std::memcpy(joined + len, "; ", 2);
        len += 2;
      }
      std::memcpy(joined + len, headers_[i].value.data(), headers_[i].value.size());
      len += headers_[i].value.size();
      if (first == headers_.size()) {
        first = i++;
      } else {
        headers_.erase(headers_.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    headers_[first].value = std::string_view(joined, len);
  }
  if (!authority_.empty()) {
    bool has_host = false;
    for (const HeaderField& h : headers_) {
      if (h.name != "host") continue;
      has_host = true;
      // RFC 9114 §4.3.1: a Host that names another authority than :authority makes the
      // request malformed; routes match one while PHP would see the other.
      if (!sameAuthority(h.value, authority_) && request_error_ == 0) request_error_ = 400;
    }
    // What HTTP/1.1 handlers and FastCGI (HTTP_HOST) expect, as for HTTP/2.
    if (!has_host) headers_.insert(headers_.begin(), HeaderField{"host", authority_});
  }
  r.headers = std::span<const HeaderField>(headers_.data(), headers_.size());

  // RFC 9114 §4.3.1: :authority stands for Host; a request may carry Host instead.
  std::string_view authority = authority_.empty() ? r.header("host") : authority_;
  if (!authority.empty()) {
    bool valid = false;
    std::string_view host = http1::hostWithoutPort(authority, valid);
    if (!valid && request_error_ == 0) request_error_ = 400;
    char* lower = arena_.allocate(host.size());
    for (size_t i = 0; i < host.size(); ++i) lower[i] = asciiLower(host[i]);
    r.host = std::string_view(lower, host.size());
  }
  r.has_body = !end_stream;
  std::string_view length = r.header("content-length");
  for (char c : length) r.content_length = r.content_length * 10 + static_cast<uint64_t>(c - '0');
  r.chunked = r.has_body && length.empty();  // the length is known once the stream ends
  r.expect_continue = equalsIgnoreCase(r.header("expect"), "100-continue");
  request_state_ = end_stream ? RequestState::kComplete : RequestState::kBody;
}

void Stream::onBodyData(std::string_view data) {
  consumeBody(data.size());  // before the sink runs: it may unpause (or pause) the stream
  body_received_ += data.size();
  if (body_received_ > bodyLimit()) {
    if (!responseStarted()) {
      // The handler has not answered yet: it will not get a body that big.
      abortInFlight();
      request_.setBodySink(nullptr);
      session_.owner_.onBodyTooLarge(*this);
    }
    return;
  }
  deliverBody(data);
}

void Stream::onBodyEnd() {
  request_state_ = RequestState::kComplete;
  deliverBodyEnd();
}

void Stream::consumeBody(uint64_t n) {
  if (request_state_ == RequestState::kBodyPaused) {
    unconsumed_ += n;
    return;
  }
  session_.transport().consumed(id_, n);
}

void Stream::setBodyReadPaused(bool paused) noexcept {
  if (closed()) return;
  if (paused) {
    if (request_state_ == RequestState::kBody) request_state_ = RequestState::kBodyPaused;
    return;
  }
  if (request_state_ == RequestState::kBodyPaused) request_state_ = RequestState::kBody;
  if (unconsumed_ > 0) {
    uint64_t n = unconsumed_;
    unconsumed_ = 0;
    session_.transport().consumed(id_, n);
    session_.streamOutputChanged();  // the MAX_STREAM_DATA, if one is due
  }
}

void Stream::close() noexcept {
  die();  // the handler's InFlight::abort(), if it still answers
  // What a pause held back still counts against the connection's window.
  if (unconsumed_ > 0) session_.transport().consumed(id_, unconsumed_);
  unconsumed_ = 0;
}

void Stream::onAcked(uint64_t n) {
  body_.acknowledge(n);
  if (writableObserver() != nullptr && body_.held() < kWritableBelow && !closed()) {
    takeWritableObserver()->onWritable();
  }
}

void Stream::endResumedDispatch() noexcept {
  session_.streamOutputChanged();  // the interim 100 or the answer, sent now
}

void Stream::onExpectContinue(bool will_read) noexcept {
  if (!will_read) return;  // the stream ends with the answer; nothing to keep apart
  // RFC 9110 §10.1.1: an interim 100 lets the client send the body it holds back.
  nghttp3_nv nv{const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(":status")),
                const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>("100")), 7, 3,
                NGHTTP3_NV_FLAG_NONE};
  nghttp3_conn_submit_info(session_.raw(), id_, &nv, 1);
}

void Stream::addResponseHeader(std::string_view name, std::string_view value) {
  // RFC 9114 §4.2: field names are lower-case in HTTP/3.
  char* lower = arena_.allocate(name.size());
  for (size_t i = 0; i < name.size(); ++i) lower[i] = asciiLower(name[i]);
  std::string_view v = arena_.copy(value);
  // The arena lives until the stream is recycled, past the moment nghttp3 encodes the
  // fields, so nghttp3 need not copy them.
  nva_.push_back(nghttp3_nv{
      reinterpret_cast<uint8_t*>(lower), reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())),
      name.size(), v.size(), NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE});
}

void Stream::sendHead(const ResponseHead& head) noexcept {
  if (!beginResponse(head.status)) return;
  bool body_allowed = statusHasBody(head.status);
  bool has_body = body_allowed && !request_.isHead();

  nva_.clear();
  char status[3] = {static_cast<char>('0' + head.status / 100 % 10),
                    static_cast<char>('0' + head.status / 10 % 10),
                    static_cast<char>('0' + head.status % 10)};
  addResponseHeader(":status", std::string_view(status, 3));
  for (const HeaderField& h : head.headers) {
    if (!droppedResponseField(h.name)) addResponseHeader(h.name, h.value);
  }
  if (body_allowed && head.content_length.has_value()) {
    char digits[20];
    size_t n = formatDecimal(*head.content_length, digits);
    addResponseHeader("content-length", std::string_view(digits, n));
  }
  addResponseHeader("date", session_.date().value());
  if (!server_header.empty()) addResponseHeader("server", server_header);

  bool ends_here = !has_body || (head.content_length.has_value() && *head.content_length == 0);
  data_ = ends_here ? DataState::kNone : DataState::kFlowing;  // kNone: body calls dropped
  int rv = nghttp3_conn_submit_response(session_.raw(), id_, nva_.data(), nva_.size(),
                                        ends_here ? nullptr : Session::bodyReader());
  if (rv != 0) cut();
  session_.streamOutputChanged();
}

void Stream::resumeData() {
  if (data_ != DataState::kDeferred) return;
  data_ = DataState::kFlowing;
  nghttp3_conn_resume_stream(session_.raw(), id_);
}

void Stream::sendBody(std::string_view data, BodyLifetime lifetime) noexcept {
  if (!acceptsBody() || data_ == DataState::kNone || data.empty()) return;
  countBody(data.size());
  // Stable bytes outlive the stream's acknowledgements (they belong to the snapshot the
  // stream holds): reference them. Small ones are cheaper copied next to the others.
  if (lifetime == BodyLifetime::kStable && data.size() > 1024) {
    body_.appendStable(data);
  } else {
    body_.append(data);
  }
  resumeData();
  session_.streamOutputChanged();
}

void Stream::sendFile(const FileSlice& file) noexcept {
  if (!acceptsBody() || data_ == DataState::kNone || file.length == 0) return;
  countBody(file.length);
  body_.appendFile(file);
  resumeData();
  session_.streamOutputChanged();
}

void Stream::finish() noexcept {
  if (!endResponse()) return;
  setBodyReadPaused(false);  // the rest of the body, if any, is received and dropped
  session_.streamFinished(*this);
  resumeData();
  session_.streamOutputChanged();
}

void Stream::abortResponse() noexcept {
  if (closed()) return;
  detachHandler();
  // The client must not take a short body for a whole one.
  if (endResponse()) session_.streamFinished(*this);
  cut();
  session_.streamOutputChanged();
}

void Stream::cut() {
  session_.transport().shutdownStreamWrite(id_, NGHTTP3_H3_INTERNAL_ERROR);
}

nghttp3_ssize Stream::readData(nghttp3_vec* vec, size_t count, uint32_t* flags) {
  size_t n = body_.take(vec, count);
  if (body_.failed()) {
    // A file shrank or could not be read under a response already under way: cut it.
    // What was handed out stays until the reset is through (QUIC may still hold views).
    cut();
    data_ = DataState::kDeferred;
    return NGHTTP3_ERR_WOULDBLOCK;
  }
  if (responseFinished() && body_.unsent() == 0) {
    *flags |= NGHTTP3_DATA_FLAG_EOF;
    return static_cast<nghttp3_ssize>(n);
  }
  if (n > 0) return static_cast<nghttp3_ssize>(n);
  data_ = DataState::kDeferred;
  return NGHTTP3_ERR_WOULDBLOCK;
}

}  // namespace scalws::worker::http3
