#include "worker/http2/stream.h"

#include "worker/http/pseudo_header_request.h"
#include "worker/http2/session.h"

namespace scalws::worker::http2 {

Stream::Stream(Session& session)
    : MultiplexedStream(1024), session_(session), body_(session.pool_) {
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
  resetRequestSide();
  nva_.clear();
  pseudo_ = {};
  alt_svc = {};
  id_ = 0;
}

void Stream::addHeader(nghttp2_rcbuf* name_buf, nghttp2_rcbuf* value_buf) {
  nghttp2_vec n = nghttp2_rcbuf_get_buf(name_buf);
  nghttp2_vec v = nghttp2_rcbuf_get_buf(value_buf);
  std::string_view name(reinterpret_cast<const char*>(n.base), n.len);
  std::string_view value(reinterpret_cast<const char*>(v.base), v.len);
  // RFC 9113 §6.5.2: the size of a field is its name, its value and 32 bytes.
  const SessionSettings& limits = session_.settings_;
  if (!countField(name.size() + value.size() + 32, limits.max_header_list, limits.max_headers)) {
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
      pseudo_.method = value;
    } else if (name == ":path") {
      pseudo_.path = value;
    } else if (name == ":authority") {
      pseudo_.authority = value;
    } else if (name == ":protocol") {
      pseudo_.protocol = value;  // nghttp2 allows it only with SETTINGS_ENABLE_CONNECT_PROTOCOL
    }
    return;
  }
  addField(name, value);
}

void Stream::finishHead(bool end_stream) {
  MultiplexedStream::finishHead(HttpVersion::kHttp2, pseudo_, end_stream);
}

void Stream::reopenWindow(uint64_t n) noexcept {
  session_.consume(id_, n);
}

void Stream::outputChanged() noexcept {
  session_.streamOutputChanged();
}

void Stream::bodyTooLarge() noexcept {
  session_.owner_.onBodyTooLarge(*this);
}

void Stream::close() noexcept {
  die();  // the handler's InFlight::abort(), if it still answers
  body_.clear();
  releaseUnconsumed();
}

void Stream::resumeCodec() noexcept {
  nghttp2_session_resume_data(session_.raw(), id_);
}

void Stream::onExpectContinue(bool will_read) noexcept {
  if (!will_read) return;  // the stream ends with the answer; nothing to keep apart
  // RFC 9110 §10.1.1: an interim 100 lets the client send the body it holds back.
  const nghttp2_nv kContinue[] = {
      {const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(":status")),
       const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>("100")), 7, 3, NGHTTP2_NV_FLAG_NONE}};
  nghttp2_submit_headers(session_.raw(), NGHTTP2_FLAG_NONE, id_, nullptr, kContinue, 1, nullptr);
}

void Stream::setNva(std::span<const HeaderField> fields) {
  nva_.clear();
  for (const HeaderField& f : fields) {
    nva_.push_back(nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(f.name.data())),
                              reinterpret_cast<uint8_t*>(const_cast<char*>(f.value.data())),
                              f.name.size(), f.value.size(),
                              NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE});
  }
}

void Stream::sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept {
  if (closed() || responseState() != ResponseState::kNone || status < 102 || status > 199) return;
  setNva(interimFields(status, headers));
  // RFC 9113 §8.1: a HEADERS frame without END_STREAM carrying a 1xx status.
  nghttp2_submit_headers(session_.raw(), NGHTTP2_FLAG_NONE, id_, nullptr, nva_.data(), nva_.size(),
                         nullptr);
  nva_.clear();
  session_.streamOutputChanged();
}

void Stream::sendHead(const ResponseHead& head) noexcept {
  // RFC 8441 §5: an accepted extended CONNECT is answered 2xx (HTTP/2 has no 101), and its
  // DATA both ways is the tunnel.
  uint16_t code = head.status == 101 && !request_.upgrade.empty() ? 200 : head.status;
  if (!beginResponse(code)) return;
  setNva(responseFields(code, head.headers, head.content_length, session_.date().value()));
  if (!alt_svc.empty()) {
    nva_.push_back(nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>("alt-svc")),
                              reinterpret_cast<uint8_t*>(const_cast<char*>(alt_svc.data())), 7,
                              alt_svc.size(),
                              NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE});
  }
  bool ends_here = startData(head, code);
  nghttp2_data_provider provider;
  provider.source.ptr = this;
  provider.read_callback = &Session::onReadData;
  int rv = nghttp2_submit_response(session_.raw(), id_, nva_.data(), nva_.size(),
                                   ends_here ? nullptr : &provider);
  if (rv != 0) {
    nghttp2_submit_rst_stream(session_.raw(), NGHTTP2_FLAG_NONE, id_, NGHTTP2_INTERNAL_ERROR);
  }
  session_.streamOutputChanged();
}

void Stream::queueBody(std::string_view data, BodyLifetime lifetime) noexcept {
  // Stable bytes are only referenced here; writing the DATA frame copies small ones next
  // to its header (Session::onSendData).
  if (lifetime == BodyLifetime::kStable) {
    body_.appendStable(data);
  } else {
    body_.append(data);
  }
}

void Stream::queueFile(const FileSlice& file) noexcept {
  body_.appendFile(file);
}

void Stream::responseEnded() noexcept {
  session_.streamFinished(*this);
}

}  // namespace scalws::worker::http2
