#include "worker/http2/stream.h"

#include "worker/http/pseudo_header_request.h"
#include "worker/http2/session.h"

namespace scalws::worker::http2 {

Stream::Stream(Session& session) : CodecStream(session, session.pool_) {}

void Stream::start(int32_t id) {
  id_ = id;
}

void Stream::recycle() {
  recycleShared();
  alt_svc = {};
}

void Stream::addHeader(nghttp2_rcbuf* name_buf, nghttp2_rcbuf* value_buf) {
  const SessionSettings& limits = session_.settings_;
  Field f = takeField(name_buf, value_buf, limits.max_header_list, limits.max_headers);
  if (!f.keep) return;
  const std::string_view name = f.name;
  const std::string_view value = f.value;
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

void Stream::reopenWindow(uint64_t n) noexcept {
  session_.consume(id_, n);
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

void Stream::sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept {
  if (!interimNva(status, headers)) return;
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
    addNv("alt-svc", alt_svc);
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

}  // namespace scalws::worker::http2
