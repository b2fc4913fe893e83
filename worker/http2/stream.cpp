#include "worker/http2/stream.h"

#include <cstring>

#include "worker/http/method.h"
#include "worker/http1/request_target.h"
#include "worker/http1/response_serializer.h"
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

}  // namespace

Stream::Stream(Session& session) : session_(session), arena_(1024) {
  request_.arena = &arena_;
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
  arena_.reset();
  request_.resetForReuse();
  request_.setBodySink(nullptr);
  headers_.clear();
  nva_.clear();
  method_ = path_ = authority_ = {};
  header_bytes_ = 0;
  header_count_ = 0;
  request_error_ = 0;
  dispatched_ = request_complete_ = false;
  body_received_ = 0;
  body_limit_ = UINT64_MAX;
  response_started_ = has_body_ = deferred_ = finished_ = closed_ = false;
  status_ = 0;
  body_bytes_ = 0;
  in_flight_ = nullptr;
  writable_observer_ = nullptr;
  handler = nullptr;
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
    }
    return;
  }
  headers_.push_back(HeaderField{name, value});
}

void Stream::finishHead(bool end_stream) {
  Request& r = request_;
  request_complete_ = end_stream;
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
    for (const HeaderField& h : headers_) has_host = has_host || h.name == "host";
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
  r.expect_continue = equalsIgnoreCase(r.header("expect"), "100-continue");
}

void Stream::onBodyData(std::string_view data) {
  body_received_ += data.size();
  if (body_received_ > body_limit_) {
    if (!response_started_ && dispatched_) {
      // The handler has not answered yet: it will not get a body that big.
      if (in_flight_ != nullptr) {
        InFlight* f = in_flight_;
        in_flight_ = nullptr;
        f->abort();
      }
      request_.setBodySink(nullptr);
      session_.owner_.onBodyTooLarge(*this);
    }
    return;
  }
  if (BodySink* sink = request_.bodySink(); sink != nullptr && !finished_) {
    sink->onBodyData(data);
  }
}

void Stream::onBodyEnd() {
  request_complete_ = true;
  if (BodySink* sink = request_.bodySink(); sink != nullptr && !finished_) sink->onBodyEnd();
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
  if (response_started_ || closed_) return;
  response_started_ = true;
  status_ = head.status;
  bool body_allowed = http1::statusHasBody(head.status);
  has_body_ = body_allowed && !request_.isHead();

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
    size_t n = http1::formatDecimal(*head.content_length, digits);
    addResponseHeader("content-length", std::string_view(digits, n));
  }
  addResponseHeader("date", session_.date().value());
  if (!server_header.empty()) addResponseHeader("server", server_header);
  if (!alt_svc.empty()) addResponseHeader("alt-svc", alt_svc);

  bool ends_here = !has_body_ || (head.content_length.has_value() && *head.content_length == 0);
  nghttp2_data_provider provider;
  provider.source.ptr = this;
  provider.read_callback = &Session::onReadData;
  if (ends_here) has_body_ = false;  // later body calls are dropped
  int rv = nghttp2_submit_response(session_.raw(), id_, nva_.data(), nva_.size(),
                                   ends_here ? nullptr : &provider);
  if (rv != 0) {
    nghttp2_submit_rst_stream(session_.raw(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_INTERNAL_ERROR);
  }
  session_.streamOutputChanged();
}

void Stream::sendBody(std::string_view data, BodyLifetime lifetime) noexcept {
  if (!response_started_ || finished_ || closed_ || !has_body_ || data.empty()) return;
  body_bytes_ += data.size();
  // Stable bytes are only referenced here; writing the DATA frame copies small ones next
  // to its header (Session::onSendData).
  if (lifetime == BodyLifetime::kStable) {
    body_.appendStable(data);
  } else {
    body_.append(data);
  }
  if (deferred_) {
    deferred_ = false;
    nghttp2_session_resume_data(session_.raw(), id_);
  }
  session_.streamOutputChanged();
}

void Stream::sendFile(const FileSlice& file) noexcept {
  if (!response_started_ || finished_ || closed_ || !has_body_ || file.length == 0) return;
  body_bytes_ += file.length;
  body_.appendFile(file);
  if (deferred_) {
    deferred_ = false;
    nghttp2_session_resume_data(session_.raw(), id_);
  }
  session_.streamOutputChanged();
}

void Stream::finish() noexcept {
  if (!response_started_ || finished_ || closed_) return;
  finished_ = true;
  in_flight_ = nullptr;
  writable_observer_ = nullptr;
  session_.streamFinished(*this);
  if (deferred_) {
    deferred_ = false;
    nghttp2_session_resume_data(session_.raw(), id_);
  }
  session_.streamOutputChanged();
}

}  // namespace scalws::worker::http2
