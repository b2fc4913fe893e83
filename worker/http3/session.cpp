#include "worker/http3/session.h"

#include "common/log.h"

namespace scalws::worker::http3 {
namespace {

Session& self(void* p) {
  return *static_cast<Session*>(p);
}

}  // namespace

// nghttp3's callbacks: each finds the Session (conn user data) and the Stream (stream
// user data, null for control and QPACK streams).
struct Session::Callbacks {
  static int ackedStreamData(nghttp3_conn*, int64_t, uint64_t len, void*, void* stream) {
    if (stream != nullptr) static_cast<Stream*>(stream)->onAcked(len);
    return 0;
  }
  static int streamClose(nghttp3_conn*, int64_t, uint64_t, void* session, void* stream) {
    if (stream != nullptr) self(session).onHttpStreamClose(*static_cast<Stream*>(stream));
    return 0;
  }
  static int recvData(nghttp3_conn*, int64_t id, const uint8_t* data, size_t len, void* session,
                      void* stream) {
    if (stream == nullptr) {
      self(session).transport_.consumed(id, len);
      return 0;
    }
    // The stream gives the credit back as its handler takes the bytes (or once it
    // unpauses), so a paused handler holds at most the stream's window.
    static_cast<Stream*>(stream)->onBodyData(
        std::string_view(reinterpret_cast<const char*>(data), len));
    return 0;
  }
  static int deferredConsume(nghttp3_conn*, int64_t id, size_t consumed, void* session, void*) {
    self(session).transport_.consumed(id, consumed);
    return 0;
  }
  static int beginHeaders(nghttp3_conn* conn, int64_t id, void* session, void* stream) {
    if (stream != nullptr) return 0;  // trailers take the same path; we ignore them
    Session& s = self(session);
    Stream* created = s.acquire(id);
    nghttp3_conn_set_stream_user_data(conn, id, created);
    return 0;
  }
  static int recvHeader(nghttp3_conn*, int64_t, int32_t token, nghttp3_rcbuf* name,
                        nghttp3_rcbuf* value, uint8_t, void*, void* stream) {
    if (stream != nullptr) static_cast<Stream*>(stream)->addHeader(token, name, value);
    return 0;
  }
  static int endHeaders(nghttp3_conn*, int64_t id, int fin, void* session, void* stream) {
    if (stream == nullptr) return 0;
    Session& s = self(session);
    auto* st = static_cast<Stream*>(stream);
    st->finishHead(fin != 0);
    // RFC 9114 §4.2.2 / the bomb check: a section 4× past the limit is not worth a 431.
    if (st->header_bytes_ > 4 * s.settings_.max_field_section) {
      s.transport_.shutdownStreamWrite(id, NGHTTP3_H3_EXCESSIVE_LOAD);
      s.transport_.shutdownStreamRead(id, NGHTTP3_H3_EXCESSIVE_LOAD);
      return 0;
    }
    s.owner_.onRequest(*st);
    return 0;
  }
  static int endStream(nghttp3_conn*, int64_t, void*, void* stream) {
    if (stream != nullptr) static_cast<Stream*>(stream)->onBodyEnd();
    return 0;
  }
  static int stopSending(nghttp3_conn*, int64_t id, uint64_t code, void* session, void*) {
    self(session).transport_.shutdownStreamRead(id, code);
    return 0;
  }
  static int resetStream(nghttp3_conn*, int64_t id, uint64_t code, void* session, void*) {
    self(session).transport_.shutdownStreamWrite(id, code);
    return 0;
  }
  static nghttp3_ssize readData(nghttp3_conn*, int64_t, nghttp3_vec* vec, size_t count,
                                uint32_t* flags, void*, void* stream) {
    return static_cast<Stream*>(stream)->readData(vec, count, flags);
  }
};

const nghttp3_data_reader* Session::bodyReader() {
  static const nghttp3_data_reader reader{&Callbacks::readData};
  return &reader;
}

Session::Session(SessionOwner& owner, quic::Connection& transport, const SessionSettings& settings,
                 common::DateCache& date, BufferPool& buffers, CodecMemory* memory)
    : owner_(owner),
      transport_(transport),
      settings_(settings),
      date_(date),
      buffers_(buffers),
      resets_(settings.reset_burst, settings.resets_per_second) {
  if (memory != nullptr) {
    memory_ = nghttp3_mem{memory, &CodecMemory::mallocFn, &CodecMemory::freeFn,
                          &CodecMemory::callocFn, &CodecMemory::reallocFn};
  }
}

Session::~Session() {
  // Header buffers the streams still hold came from nghttp3's allocator: give them back
  // before the connection goes.
  streams_.recycleAll();
  if (conn_ != nullptr) nghttp3_conn_del(conn_);
}

bool Session::onSendKeysReady() noexcept {
  if (conn_ != nullptr) return true;
  nghttp3_callbacks cb{};
  cb.acked_stream_data = &Callbacks::ackedStreamData;
  cb.stream_close = &Callbacks::streamClose;
  cb.recv_data = &Callbacks::recvData;
  cb.deferred_consume = &Callbacks::deferredConsume;
  cb.begin_headers = &Callbacks::beginHeaders;
  cb.recv_header = &Callbacks::recvHeader;
  cb.end_headers = &Callbacks::endHeaders;
  cb.stop_sending = &Callbacks::stopSending;
  cb.end_stream = &Callbacks::endStream;
  cb.reset_stream = &Callbacks::resetStream;
  nghttp3_settings settings;
  nghttp3_settings_default(&settings);
  settings.max_field_section_size = settings_.max_field_section;
  settings.qpack_max_dtable_capacity = settings_.qpack_dtable;
  settings.qpack_blocked_streams = settings_.qpack_blocked_streams;
  // Response fields go out with QPACK's static table and literals only, as nginx and
  // quic-go send them. A dynamic table saves a few dozen bytes per response, but each
  // response then costs an insert, blocked-stream bookkeeping and a Section Acknowledgment
  // the client sends and we process: about 9 % of the CPU of a small response.
  settings.qpack_encoder_max_dtable_capacity = 0;
  const nghttp3_mem* mem = memory_.malloc != nullptr ? &memory_ : nullptr;
  if (nghttp3_conn_server_new(&conn_, &cb, &settings, mem, this) != 0) {
    conn_ = nullptr;
    return false;
  }
  const ngtcp2_transport_params* local = ngtcp2_conn_get_local_transport_params(transport_.raw());
  nghttp3_conn_set_max_client_streams_bidi(conn_, local->initial_max_streams_bidi);
  // RFC 9114 §6.2: our control stream, then the QPACK encoder and decoder streams.
  int64_t control = -1;
  int64_t encoder = -1;
  int64_t decoder = -1;
  if (!transport_.openUniStream(control) || !transport_.openUniStream(encoder) ||
      !transport_.openUniStream(decoder) || nghttp3_conn_bind_control_stream(conn_, control) != 0 ||
      nghttp3_conn_bind_qpack_streams(conn_, encoder, decoder) != 0) {
    return false;
  }
  return true;
}

Stream* Session::acquire(int64_t id) {
  Stream* s = streams_.take(*this);
  s->start(id, in_early_data_);
  return s;
}

void Session::onHttpStreamClose(Stream& stream) {
  stream.close();
  owner_.onStreamClosed(stream);
  streams_.retire(&stream);
}

void Session::collect() {
  streams_.collect();
}

void Session::abortAll() {
  for (Stream* s = streams_.active().front(); s != nullptr; s = StreamList<Stream>::next(s)) {
    s->close();
    transport_.noteStreamLosses(s->id());
  }
}

void Session::shutdown() {
  if (conn_ == nullptr || going_away_) return;
  going_away_ = true;
  // GOAWAY naming the first request stream we will not serve (RFC 9114 §5.2).
  nghttp3_conn_shutdown(conn_);
}

void Session::streamOutputChanged() {
  owner_.onOutputPending();
}

void Session::streamFinished(Stream& stream) {
  owner_.onResponseFinished(stream);
}

bool Session::fail(int nghttp3_error) {
  LOG_DEBUG("HTTP/3: %s", nghttp3_strerror(nghttp3_error));
  transport_.failWith(nghttp3_err_infer_quic_app_error_code(nghttp3_error));
  return false;
}

bool Session::overFlood() {
  if (resets_.take(now_ms_)) return false;
  LOG_DEBUG("HTTP/3: too many streams reset or stopped: closing (H3_EXCESSIVE_LOAD)");
  transport_.failWith(NGHTTP3_H3_EXCESSIVE_LOAD);
  return true;
}

bool Session::onStreamData(int64_t stream_id, const uint8_t* data, size_t len, bool fin,
                           bool early) noexcept {
  if (conn_ == nullptr) {
    transport_.consumed(stream_id, len);
    return true;
  }
  in_early_data_ = early;
  nghttp3_ssize n = nghttp3_conn_read_stream(conn_, stream_id, data, len, fin ? 1 : 0);
  in_early_data_ = false;
  if (n < 0) return fail(static_cast<int>(n));
  transport_.consumed(stream_id, static_cast<size_t>(n));
  return true;
}

bool Session::onStreamAcked(int64_t stream_id, uint64_t len) noexcept {
  if (conn_ == nullptr) return true;
  int rv = nghttp3_conn_add_ack_offset(conn_, stream_id, len);
  return rv == 0 || fail(rv);
}

bool Session::onStreamClosed(int64_t stream_id, uint64_t app_error_code) noexcept {
  if (app_error_code == 0) app_error_code = NGHTTP3_H3_NO_ERROR;
  int rv = conn_ != nullptr ? nghttp3_conn_close_stream(conn_, stream_id, app_error_code)
                            : NGHTTP3_ERR_STREAM_NOT_FOUND;
  if (rv == NGHTTP3_ERR_STREAM_NOT_FOUND) {
    // A request stream nghttp3 never saw a byte of still counts against the peer's limit.
    if (ngtcp2_is_bidi_stream(stream_id)) transport_.allowAnotherStream();
    return true;
  }
  if (rv != 0) return fail(rv);
  if (ngtcp2_is_bidi_stream(stream_id)) transport_.allowAnotherStream();
  return true;
}

bool Session::onStreamReset(int64_t stream_id, uint64_t) noexcept {
  if (overFlood()) return false;
  if (conn_ == nullptr) return true;
  int rv = nghttp3_conn_shutdown_stream_read(conn_, stream_id);
  return rv == 0 || fail(rv);
}

bool Session::onStreamStopSending(int64_t stream_id, uint64_t) noexcept {
  if (overFlood()) return false;
  if (conn_ == nullptr) return true;
  int rv = nghttp3_conn_shutdown_stream_read(conn_, stream_id);
  return rv == 0 || fail(rv);
}

bool Session::onStreamWritable(int64_t stream_id) noexcept {
  if (conn_ == nullptr) return true;
  int rv = nghttp3_conn_unblock_stream(conn_, stream_id);
  return rv == 0 || fail(rv);
}

void Session::onPeerStreamLimit(uint64_t max_bidi_streams) noexcept {
  if (conn_ != nullptr) nghttp3_conn_set_max_client_streams_bidi(conn_, max_bidi_streams);
}

bool Session::nextOutgoing(Outgoing& out) noexcept {
  if (conn_ == nullptr) return true;
  int fin = 0;
  static_assert(sizeof(nghttp3_vec) == sizeof(ngtcp2_vec));
  nghttp3_ssize n = nghttp3_conn_writev_stream(
      conn_, &out.stream_id, &fin, reinterpret_cast<nghttp3_vec*>(out.vecs), Outgoing::kMaxVecs);
  if (n < 0) return fail(static_cast<int>(n));
  out.count = static_cast<size_t>(n);
  out.fin = fin != 0;
  return true;
}

bool Session::onOutgoingWritten(int64_t stream_id, size_t bytes) noexcept {
  if (conn_ == nullptr || stream_id < 0) return true;
  int rv = nghttp3_conn_add_write_offset(conn_, stream_id, bytes);
  return rv == 0 || fail(rv);
}

void Session::onOutgoingBlocked(int64_t stream_id) noexcept {
  if (conn_ != nullptr) nghttp3_conn_block_stream(conn_, stream_id);
}

void Session::onOutgoingShut(int64_t stream_id) noexcept {
  if (conn_ != nullptr) nghttp3_conn_shutdown_stream_write(conn_, stream_id);
}

}  // namespace scalws::worker::http3
