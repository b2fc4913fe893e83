#include "worker/http3/stream.h"

#include "worker/http/pseudo_header_request.h"
#include "worker/http3/session.h"

namespace scalws::worker::http3 {
namespace {

// A stream's response body waiting for acknowledgements wakes a paused producer once this
// little is left unacknowledged.
constexpr uint64_t kWritableBelow = 64 * 1024;

}  // namespace

Stream::Stream(Session& session) : CodecStream(session, session.buffers()) {}

void Stream::start(int64_t id, bool early) {
  id_ = id;
  early_ = early;
}

void Stream::recycle() {
  recycleShared();
  early_ = false;
}

void Stream::addHeader(int32_t token, nghttp3_rcbuf* name_buf, nghttp3_rcbuf* value_buf) {
  const SessionSettings& limits = session_.settings();
  Field f = takeField(name_buf, value_buf, limits.max_field_section, limits.max_headers);
  if (!f.keep) return;
  const std::string_view name = f.name;
  const std::string_view value = f.value;
  // nghttp3 has checked the pseudo-header set (RFC 9114 §4.3.1): each at most once, before
  // the regular fields, only request ones, names lower-case.
  switch (token) {
    case NGHTTP3_QPACK_TOKEN__METHOD:
      pseudo_.method = value;
      return;
    case NGHTTP3_QPACK_TOKEN__PATH:
      pseudo_.path = value;
      return;
    case NGHTTP3_QPACK_TOKEN__AUTHORITY:
      pseudo_.authority = value;
      return;
    default:
      break;
  }
  if (!name.empty() && name.front() == ':') return;  // :scheme, :protocol
  addField(name, value);
}

void Stream::reopenWindow(uint64_t n) noexcept {
  session_.transport().consumed(id_, n);
}

void Stream::close() noexcept {
  die();  // the handler's InFlight::abort(), if it still answers
  releaseUnconsumed();
}

void Stream::onAcked(uint64_t n) {
  body_.acknowledge(n);
  if (writableObserver() != nullptr && body_.held() < kWritableBelow && !closed()) {
    takeWritableObserver()->onWritable();
  }
}

void Stream::onExpectContinue(bool will_read) noexcept {
  if (!will_read) return;  // the stream ends with the answer; nothing to keep apart
  // RFC 9110 §10.1.1: an interim 100 lets the client send the body it holds back.
  nghttp3_nv nv{const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(":status")),
                const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>("100")), 7, 3,
                NGHTTP3_NV_FLAG_NONE};
  nghttp3_conn_submit_info(session_.raw(), id_, &nv, 1);
}

void Stream::sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept {
  if (!interimNva(status, headers)) return;
  // RFC 9114 §4.1: interim responses are HEADERS frames before the final one.
  if (nghttp3_conn_submit_info(session_.raw(), id_, nva_.data(), nva_.size()) != 0) return;
  nva_.clear();
  session_.streamOutputChanged();
}

void Stream::sendHead(const ResponseHead& head) noexcept {
  if (!beginResponse(head.status)) return;
  setNva(responseFields(head.status, head.headers, head.content_length, session_.date().value()));
  bool ends_here = startData(head, head.status);
  int rv = nghttp3_conn_submit_response(session_.raw(), id_, nva_.data(), nva_.size(),
                                        ends_here ? nullptr : Session::bodyReader());
  if (rv != 0) cut();
  session_.streamOutputChanged();
}

void Stream::resumeCodec() noexcept {
  nghttp3_conn_resume_stream(session_.raw(), id_);
}

void Stream::queueBody(std::string_view data, BodyLifetime lifetime) noexcept {
  // Stable bytes outlive the stream's acknowledgements (they belong to the snapshot the
  // stream holds): reference them. Small ones are cheaper copied next to the others.
  if (lifetime == BodyLifetime::kStable && data.size() > 1024) {
    body_.appendStable(data);
  } else {
    body_.append(data);
  }
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
