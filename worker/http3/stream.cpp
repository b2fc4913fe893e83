#include "worker/http3/stream.h"

#include "worker/http/pseudo_header_request.h"
#include "worker/http3/session.h"

namespace scalws::worker::http3 {
namespace {

std::string_view viewOf(nghttp3_rcbuf* buf) {
  nghttp3_vec v = nghttp3_rcbuf_get_buf(buf);
  return std::string_view(reinterpret_cast<const char*>(v.base), v.len);
}

// A stream's response body waiting for acknowledgements wakes a paused producer once this
// little is left unacknowledged.
constexpr uint64_t kWritableBelow = 64 * 1024;

}  // namespace

Stream::Stream(Session& session)
    : MultiplexedStream(1024), session_(session), body_(session.buffers()) {
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
  resetRequestSide();
  nva_.clear();
  pseudo_ = {};
  early_ = false;
  id_ = -1;
}

void Stream::addHeader(int32_t token, nghttp3_rcbuf* name_buf, nghttp3_rcbuf* value_buf) {
  std::string_view name = viewOf(name_buf);
  std::string_view value = viewOf(value_buf);
  // RFC 9114 §4.2.2: a field's size is its name, its value and 32 bytes.
  const SessionSettings& limits = session_.settings();
  if (!countField(name.size() + value.size() + 32, limits.max_field_section, limits.max_headers)) {
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

void Stream::finishHead(bool end_stream) {
  MultiplexedStream::finishHead(HttpVersion::kHttp3, pseudo_, end_stream);
}

void Stream::reopenWindow(uint64_t n) noexcept {
  session_.transport().consumed(id_, n);
}

void Stream::outputChanged() noexcept {
  session_.streamOutputChanged();
}

void Stream::bodyTooLarge() noexcept {
  session_.owner_.onBodyTooLarge(*this);
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

void Stream::setNva(std::span<const HeaderField> fields) {
  nva_.clear();
  for (const HeaderField& f : fields) {
    nva_.push_back(nghttp3_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(f.name.data())),
                              reinterpret_cast<uint8_t*>(const_cast<char*>(f.value.data())),
                              f.name.size(), f.value.size(),
                              NGHTTP3_NV_FLAG_NO_COPY_NAME | NGHTTP3_NV_FLAG_NO_COPY_VALUE});
  }
}

void Stream::sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept {
  if (closed() || responseState() != ResponseState::kNone || status < 102 || status > 199) return;
  setNva(interimFields(status, headers));
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

void Stream::queueFile(const FileSlice& file) noexcept {
  body_.appendFile(file);
}

void Stream::responseEnded() noexcept {
  session_.streamFinished(*this);
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
