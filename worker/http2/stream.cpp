#include "worker/http2/stream.h"

#include <cstring>

#include "worker/http/decimal.h"
#include "worker/http/method.h"
#include "worker/http/status_text.h"
#include "worker/http1/request_target.h"
#include "worker/http2/session.h"

namespace scalws::worker::http2 {
namespace {

// RFC 9113 §8.2.2: connection-specific fields must not appear in HTTP/2. Content-Length
// is the writer's to set, from ResponseHead.
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

bool hasUpperCase(std::string_view s) {
  for (char c : s) {
    if (c >= 'A' && c <= 'Z') return true;
  }
  return false;
}

// The same host (case-insensitive) and, where both name one, the same port.
bool sameAuthority(std::string_view a, std::string_view b) {
  bool valid_a = false;
  bool valid_b = false;
  std::string_view host_a = http1::hostWithoutPort(a, valid_a);  // a prefix of `a`
  std::string_view host_b = http1::hostWithoutPort(b, valid_b);
  if (!valid_a || !valid_b || !equalsIgnoreCase(host_a, host_b)) return false;
  std::string_view port_a = a.substr(host_a.size());  // ":8443" or empty
  std::string_view port_b = b.substr(host_b.size());
  return port_a.empty() || port_b.empty() || port_a == port_b;
}

}  // namespace

Stream::Stream(Session& session) : HttpStream(1024), session_(session), body_(session.pool_) {
  headers_.reserve(16);
  held_.reserve(32);
  nva_.reserve(12);
}

void Stream::start(int32_t id) {
  id_ = id;
}

void Stream::recycle() {
  for (nghttp2_rcbuf* b : held_) nghttp2_rcbuf_decref(b);
  held_.clear();
  body_.clear();
  reset();
  request_.resetForReuse();
  headers_.clear();
  nva_.clear();
  method_ = path_ = authority_ = protocol_ = {};
  header_bytes_ = 0;
  header_count_ = 0;
  request_error_ = 0;
  request_state_ = RequestState::kHead;
  body_received_ = 0;
  unconsumed_ = 0;
  data_ = DataState::kNone;
  snapshot = nullptr;
  server_header = {};
  alt_svc = {};
  id_ = 0;
}

void Stream::addHeader(nghttp2_rcbuf* name_buf, nghttp2_rcbuf* value_buf) {
  nghttp2_vec n = nghttp2_rcbuf_get_buf(name_buf);
  nghttp2_vec v = nghttp2_rcbuf_get_buf(value_buf);
  std::string_view name(reinterpret_cast<const char*>(n.base), n.len);
  std::string_view value(reinterpret_cast<const char*>(v.base), v.len);
  // RFC 9113 §6.5.2: the size of a field is its name, its value and 32 bytes.
  header_bytes_ += name.size() + value.size() + 32;
  if (request_error_ != 0) return;
  const SessionSettings& limits = session_.settings_;
  if (header_bytes_ > limits.max_header_list || ++header_count_ > limits.max_headers + 4) {
    request_error_ = 431;  // keep counting (the bomb check), stop storing
    return;
  }
  // Static-table names are not reference counted; everything else is kept alive here.
  if (!nghttp2_rcbuf_is_static(name_buf)) {
    nghttp2_rcbuf_incref(name_buf);
    held_.push_back(name_buf);
  }
  nghttp2_rcbuf_incref(value_buf);
  held_.push_back(value_buf);
  if (!name.empty() && name.front() == ':') {
    // nghttp2 has checked the pseudo-header set (RFC 9113 §8.3.1): each at most once,
    // before the regular fields, only request ones.
    if (name == ":method") {
      method_ = value;
    } else if (name == ":path") {
      path_ = value;
    } else if (name == ":authority") {
      authority_ = value;
    } else if (name == ":protocol") {
      protocol_ = value;  // nghttp2 allows it only with SETTINGS_ENABLE_CONNECT_PROTOCOL
    }
    return;
  }
  headers_.push_back(HeaderField{name, value});
}

void Stream::finishHead(bool end_stream) {
  Request& r = request_;
  r.version = HttpVersion::kHttp2;
  r.keep_alive = true;
  r.method_name = method_;
  r.method = methodFromName(method_);
  r.target = path_;
  size_t q = path_.find('?');
  r.raw_path = path_.substr(0, q);
  r.query = q == std::string_view::npos ? std::string_view() : path_.substr(q + 1);

  // RFC 9113 §8.2.3: cookie crumbs are joined with "; " before anything else sees them.
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
      // RFC 9113 §8.3.1: "A server SHOULD treat a request as malformed if it contains a
      // Host header field that identifies an entity that differs from the entity in the
      // :authority pseudo-header field." Routes match :authority while PHP would see the
      // Host: refuse rather than serve one host's route under another's name.
      if (!sameAuthority(h.value, authority_) && request_error_ == 0) request_error_ = 400;
    }
    // What HTTP/1.1 handlers and FastCGI (HTTP_HOST, which PHP apps build URLs from) expect;
    // nginx does the same for its HTTP/2 requests.
    if (!has_host) headers_.insert(headers_.begin(), HeaderField{"host", authority_});
  }
  r.headers = std::span<const HeaderField>(headers_.data(), headers_.size());

  // RFC 9113 §8.3.1: :authority stands for Host; a request may carry Host instead.
  std::string_view authority = authority_.empty() ? r.header("host") : authority_;
  if (!authority.empty()) {
    bool valid = false;
    std::string_view host = http1::hostWithoutPort(authority, valid);
    if (!valid && request_error_ == 0) request_error_ = 400;
    if (hasUpperCase(host)) {
      char* lower = arena_.allocate(host.size());
      for (size_t i = 0; i < host.size(); ++i) lower[i] = asciiLower(host[i]);
      host = std::string_view(lower, host.size());
    }
    r.host = host;
  }
  r.has_body = !end_stream;
  std::string_view length = r.header("content-length");
  for (char c : length) r.content_length = r.content_length * 10 + static_cast<uint64_t>(c - '0');
  r.chunked = r.has_body && length.empty();  // the length is known once the stream ends
  r.expect_continue = equalsIgnoreCase(r.header("expect"), "100-continue");
  // RFC 8441 §4: an extended CONNECT asks for the protocol :protocol names over this stream.
  if (r.method == Method::kConnect && !protocol_.empty()) r.upgrade = protocol_;
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
  request_state_ = RequestState::kComplete;  // bytes held back stay so until unpaused
  deliverBodyEnd();
}

void Stream::consumeBody(uint64_t n) {
  if (request_state_ == RequestState::kBodyPaused) {
    unconsumed_ += n;
    return;
  }
  session_.consume(id_, n);
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
    session_.consume(id_, n);
    session_.streamOutputChanged();  // the WINDOW_UPDATE, if one is due
  }
}

void Stream::close() noexcept {
  die();  // the handler's InFlight::abort(), if it still answers
  body_.clear();
  // What a pause held back still counts against the connection's window.
  if (unconsumed_ > 0) session_.consume(id_, unconsumed_);
  unconsumed_ = 0;
}

void Stream::resumeData() {
  if (data_ != DataState::kDeferred) return;
  data_ = DataState::kFlowing;
  nghttp2_session_resume_data(session_.raw(), id_);
}

void Stream::endResumedDispatch() noexcept {
  session_.streamOutputChanged();  // the interim 100 or the answer, sent now
}

void Stream::onExpectContinue(bool will_read) noexcept {
  if (!will_read) return;  // the stream ends with the answer; nothing to keep apart
  // RFC 9110 §10.1.1: an interim 100 lets the client send the body it holds back.
  const nghttp2_nv kContinue[] = {
      {const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(":status")),
       const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>("100")), 7, 3, NGHTTP2_NV_FLAG_NONE}};
  nghttp2_submit_headers(session_.raw(), NGHTTP2_FLAG_NONE, id_, nullptr, kContinue, 1, nullptr);
}

void Stream::addResponseHeader(std::string_view name, std::string_view value) {
  char* lower = arena_.allocate(name.size());
  for (size_t i = 0; i < name.size(); ++i) lower[i] = asciiLower(name[i]);
  std::string_view v = arena_.copy(value);
  nva_.push_back(nghttp2_nv{
      reinterpret_cast<uint8_t*>(lower), reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())),
      name.size(), v.size(), NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE});
}

void Stream::sendHead(const ResponseHead& head) noexcept {
  // RFC 8441 §5: an accepted extended CONNECT is answered 2xx (HTTP/2 has no 101), and its
  // DATA both ways is the tunnel.
  uint16_t code = head.status == 101 && !request_.upgrade.empty() ? 200 : head.status;
  if (!beginResponse(code)) return;
  bool body_allowed = statusHasBody(code);
  bool has_body = body_allowed && !request_.isHead();

  nva_.clear();
  char status[3] = {static_cast<char>('0' + code / 100 % 10),
                    static_cast<char>('0' + code / 10 % 10), static_cast<char>('0' + code % 10)};
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
  if (!alt_svc.empty()) addResponseHeader("alt-svc", alt_svc);

  bool ends_here = !has_body || (head.content_length.has_value() && *head.content_length == 0);
  nghttp2_data_provider provider;
  provider.source.ptr = this;
  provider.read_callback = &Session::onReadData;
  data_ = ends_here ? DataState::kNone : DataState::kFlowing;  // kNone: body calls dropped
  int rv = nghttp2_submit_response(session_.raw(), id_, nva_.data(), nva_.size(),
                                   ends_here ? nullptr : &provider);
  if (rv != 0) {
    nghttp2_submit_rst_stream(session_.raw(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_INTERNAL_ERROR);
  }
  session_.streamOutputChanged();
}

void Stream::sendBody(std::string_view data, BodyLifetime lifetime) noexcept {
  if (!acceptsBody() || data_ == DataState::kNone || data.empty()) return;
  countBody(data.size());
  // Stable bytes are only referenced here; writing the DATA frame copies small ones next
  // to its header (Session::onSendData).
  if (lifetime == BodyLifetime::kStable) {
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

}  // namespace scalws::worker::http2
