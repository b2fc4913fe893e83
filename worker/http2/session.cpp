#include "worker/http2/session.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace scalws::worker::http2 {
namespace {

constexpr size_t kMaxContinuations = 8;
constexpr size_t kMaxOutboundAcks = 64;
constexpr uint32_t kBombFactor = 4;

Session& self(void* p) {
  return *static_cast<Session*>(p);
}

}  // namespace

Session::Session(SessionOwner& owner, const SessionSettings& settings, common::DateCache& date,
                 BufferPool& pool, CodecMemory* memory)
    : owner_(owner), settings_(settings), date_(date), pool_(pool), flood_(settings.flood) {
  nghttp2_session_callbacks* cb = nullptr;
  if (nghttp2_session_callbacks_new(&cb) != 0) return;
  nghttp2_session_callbacks_set_send_callback(cb, &Session::onSend);
  nghttp2_session_callbacks_set_send_data_callback(cb, &Session::onSendData);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cb, &Session::onBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback2(cb, &Session::onHeader);
  nghttp2_session_callbacks_set_on_begin_frame_callback(cb, &Session::onBeginFrame);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &Session::onFrameRecv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &Session::onDataChunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, &Session::onStreamClose);
  nghttp2_session_callbacks_set_on_frame_not_send_callback(cb, &Session::onFrameNotSent);
  nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cb, &Session::onInvalidFrame);
  nghttp2_session_callbacks_set_on_frame_send_callback(cb, &Session::onFrameSent);

  nghttp2_option* opt = nullptr;
  if (nghttp2_option_new(&opt) != 0) {
    nghttp2_session_callbacks_del(cb);
    return;
  }
  nghttp2_option_set_no_closed_streams(opt, 1);
  // Request bodies are consumed as handlers take them (MultiplexedStream::consumeBody), so a
  // handler that pauses its body stops the client at its flow-control window.
  nghttp2_option_set_no_auto_window_update(opt, 1);
  nghttp2_option_set_max_continuations(opt, kMaxContinuations);
  nghttp2_option_set_max_outbound_ack(opt, kMaxOutboundAcks);
  // Our own FloodGuard counts resets first; nghttp2's bucket stays as a looser backstop.
  nghttp2_option_set_stream_reset_rate_limit(opt, 2 * settings.flood.reset_burst,
                                             2 * settings.flood.resets_per_second);
  nghttp2_mem mem{memory, &CodecMemory::mallocFn, &CodecMemory::freeFn, &CodecMemory::callocFn,
                  &CodecMemory::reallocFn};
  int rv =
      nghttp2_session_server_new3(&session_, cb, this, opt, memory != nullptr ? &mem : nullptr);
  nghttp2_option_del(opt);
  nghttp2_session_callbacks_del(cb);
  if (rv != 0) {
    session_ = nullptr;
    return;
  }
  nghttp2_settings_entry entries[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, settings.max_concurrent_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, settings.stream_window},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, settings.max_header_list},
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1},
      // RFC 8441 §3: extended CONNECT, how WebSockets travel over HTTP/2 (a handler that
      // does not tunnel answers such a request like any other).
      {NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL, 1},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, entries, std::size(entries));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0,
                                        static_cast<int32_t>(settings.connection_window));
}

Session::~Session() {
  // Header buffers the streams still hold belong to the session's allocator: give them
  // back before it goes.
  streams_.recycleAll();
  if (session_ != nullptr) nghttp2_session_del(session_);
}

Stream* Session::streamFor(int32_t id) const {
  return static_cast<Stream*>(nghttp2_session_get_stream_user_data(session_, id));
}

Stream* Session::acquire(int32_t id) {
  Stream* s = streams_.take(*this);
  s->start(id);
  return s;
}

void Session::collect() {
  streams_.collect();
}

bool Session::receive(const char* data, size_t len, uint64_t now_ms) {
  if (failed_) return false;
  now_ms_ = now_ms;
  // The FrameChecker sees the bytes first; nghttp2 gets them up to each frame it objects
  // to, so the finding is acted on in the stream's order.
  const auto* bytes = reinterpret_cast<const uint8_t*>(data);
  size_t fed = 0;
  size_t scanned = 0;
  while (scanned < len) {
    FrameChecker::Result check = checker_.scan(bytes + scanned, len - scanned);
    size_t act_at = scanned + check.act_at;
    scanned += check.scanned;
    if (check.finding.action == FrameChecker::Action::kNone) break;
    if (!feed(bytes + fed, act_at - fed)) return false;
    fed = act_at;
    if (!nghttp2_session_want_read(session_)) break;  // nghttp2 is ending the connection
    const FrameChecker::Finding& f = check.finding;
    LOG_DEBUG("HTTP/2 stream %d: %s", f.stream_id, f.why);
    if (f.action == FrameChecker::Action::kCloseConnection) {
      terminate(f.error_code);
      return false;
    }
    // A stream nghttp2 still has open is nghttp2's to judge (it answers itself).
    if (nghttp2_session_find_stream(session_, f.stream_id) == nullptr) {
      nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, f.stream_id, f.error_code);
    }
  }
  return feed(bytes + fed, len - fed);
}

bool Session::feed(const uint8_t* data, size_t len) {
  if (failed_) return false;
  if (len == 0) return true;
  in_receive_ = true;
  ssize_t rv = nghttp2_session_mem_recv(session_, data, len);
  in_receive_ = false;
  collect();
  if (rv < 0) {
    LOG_DEBUG("HTTP/2 receive: %s", nghttp2_strerror(static_cast<int>(rv)));
    // Not a frame-level error nghttp2 answered itself (bad preface, flood, a callback that
    // could not go on): the session cannot continue.
    failed_ = true;
    // For these nghttp2 stopped before touching the session's state, so a GOAWAY saying
    // why can still go out (RFC 9113 §5.4.1); anything else ends without one.
    uint32_t code = 0;
    if (rv == NGHTTP2_ERR_FLOODED || rv == NGHTTP2_ERR_TOO_MANY_CONTINUATIONS) {
      code = NGHTTP2_ENHANCE_YOUR_CALM;
    } else if (rv == NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
      code = NGHTTP2_PROTOCOL_ERROR;
    }
    if (code != 0 && nghttp2_session_terminate_session(session_, code) == 0) goaway_error_ = code;
    return false;
  }
  return !failed_;
}

bool Session::send(ByteQueue& out) {
  if (failed_ && goaway_error_ == 0) return false;
  if (sending_) {
    resend_ = true;
    return true;
  }
  sending_ = true;
  out_ = &out;
  bool ok = true;
  do {
    resend_ = false;
    int rv = nghttp2_session_send(session_);
    if (rv != 0) {
      LOG_DEBUG("HTTP/2 send: %s", nghttp2_strerror(rv));
      ok = false;
      break;
    }
    notifyWritable();
  } while (resend_ && out.pendingBytes() < settings_.output_high_water);
  out_ = nullptr;
  sending_ = false;
  return ok;
}

void Session::notifyWritable() {
  // Observers may queue more (sendBody): they run after nghttp2 returned, never inside it.
  std::vector<Stream*> ready;
  ready.swap(writable_);
  for (Stream* s : ready) {
    if (s->closed() || s->writableObserver() == nullptr || !s->body_.empty()) continue;
    s->takeWritableObserver()->onWritable();
  }
  if (writable_.empty()) writable_.swap(ready);  // keep the capacity
  writable_.clear();
}

bool Session::wantsRead() const {
  return !failed_ && nghttp2_session_want_read(session_) != 0;
}

bool Session::wantsWrite() const {
  return (!failed_ || goaway_error_ != 0) && nghttp2_session_want_write(session_) != 0;
}

void Session::shutdown() {
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE,
                        nghttp2_session_get_last_proc_stream_id(session_), NGHTTP2_NO_ERROR,
                        nullptr, 0);
}

void Session::terminate(uint32_t error_code) {
  if (failed_) return;
  failed_ = true;
  goaway_error_ = error_code;
  nghttp2_session_terminate_session(session_, error_code);
}

bool Session::overFlood(bool allowed) {
  if (allowed) return false;
  LOG_INFO("HTTP/2 peer over its frame rate limit: GOAWAY ENHANCE_YOUR_CALM");
  terminate(NGHTTP2_ENHANCE_YOUR_CALM);
  return true;
}

bool Session::hasBlockedData() const {
  for (Stream* s = streams_.active().front(); s != nullptr; s = StreamList<Stream>::next(s)) {
    if (s->data_ != Stream::DataState::kNone && (!s->body_.empty() || s->responseFinished())) {
      return true;
    }
  }
  return false;
}

bool Session::awaitsRequestBody() const {
  for (Stream* s = streams_.active().front(); s != nullptr; s = StreamList<Stream>::next(s)) {
    // A paused body is held back by us, not by the client: no body timeout for it; nor
    // for a tunnel, whose client may stay quiet as long as its handler allows.
    if (s->request_state_ == Stream::RequestState::kBody && !s->tunnelled()) return true;
  }
  return false;
}

void Session::abortAll() {
  for (Stream* s = streams_.active().front(); s != nullptr; s = StreamList<Stream>::next(s))
    s->close();
}

void Session::consume(int32_t stream_id, uint64_t n) {
  if (n == 0) return;
  // Counts for the connection and, while it is open, the stream; nghttp2 queues a
  // WINDOW_UPDATE once half a window was consumed.
  int rv = nghttp2_session_consume(session_, stream_id, n);
  if (rv != 0) LOG_DEBUG("HTTP/2 consume: %s", nghttp2_strerror(rv));
}

void Session::streamOutputChanged() {
  if (in_receive_) return;  // the owner sends once receive() returns
  if (sending_) {
    resend_ = true;
    return;
  }
  owner_.onOutputPending();
}

void Session::streamFinished(Stream& stream) {
  owner_.onResponseFinished(stream);
}

ssize_t Session::onReadData(nghttp2_session*, int32_t, uint8_t*, size_t len, uint32_t* flags,
                            nghttp2_data_source* source, void* p) {
  return self(p).readData(*static_cast<Stream*>(source->ptr), len, flags);
}

int Session::readData(Stream& s, size_t max, uint32_t* flags) {
  if (s.body_.empty()) {
    if (s.responseFinished()) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      return 0;
    }
    s.data_ = Stream::DataState::kDeferred;  // resumed by the next sendBody/sendFile/finish
    return NGHTTP2_ERR_DEFERRED;
  }
  uint64_t n = std::min<uint64_t>(s.body_.size(), max);
  *flags |= NGHTTP2_DATA_FLAG_NO_COPY;
  if (n == s.body_.size() && s.responseFinished()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<int>(n);
}

ssize_t Session::onSend(nghttp2_session*, const uint8_t* data, size_t len, int, void* p) {
  Session& s = self(p);
  if (s.out_->pendingBytes() >= s.settings_.output_high_water) return NGHTTP2_ERR_WOULDBLOCK;
  s.out_->append(std::string_view(reinterpret_cast<const char*>(data), len));
  return static_cast<ssize_t>(len);
}

int Session::onSendData(nghttp2_session*, nghttp2_frame* frame, const uint8_t* header, size_t len,
                        nghttp2_data_source* source, void* p) {
  Session& s = self(p);
  ByteQueue& out = *s.out_;
  if (out.pendingBytes() >= s.settings_.output_high_water) return NGHTTP2_ERR_WOULDBLOCK;
  Stream& stream = *static_cast<Stream*>(source->ptr);
  (void)frame;  // we never pad (no padding callback), so frame->data.padlen is 0
  out.append(std::string_view(reinterpret_cast<const char*>(header), 9));
  uint64_t left = len;
  while (left > 0) {
    const ByteQueue::Segment& seg = stream.body_.front();
    uint64_t take = std::min(left, seg.length);
    switch (seg.kind) {
      case ByteQueue::Kind::kOwned:
        out.append(std::string_view(seg.data, take));
        break;
      case ByteQueue::Kind::kStable:
        // Bytes with an owner (a pinned cache entry) are copied: the owner goes when they
        // leave the stream's queue, before the connection's queue would have sent them.
        if (take > 1024 && seg.owner == nullptr) {
          out.appendStable(std::string_view(seg.data, take));
        } else {
          out.append(std::string_view(seg.data, take));
        }
        break;
      case ByteQueue::Kind::kFile: {
        // Read this frame's share of the file now: the whole file is never in memory,
        // and under TLS it would be read to be encrypted anyway.
        char* dst = out.reserve(take);
        uint64_t got = 0;
        while (got < take) {
          ssize_t n = ::pread(seg.fd, dst + got, take - got, static_cast<off_t>(seg.offset + got));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) break;
          got += static_cast<uint64_t>(n);
        }
        if (got < take) {
          // The file shrank under us: the promised length can no longer be met, and half a
          // frame is already queued, so the connection must go.
          LOG_WARN("file ended early while sending it over HTTP/2");
          return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        out.commit(take);
        break;
      }
    }
    stream.body_.consume(take);
    left -= take;
  }
  s.data_bytes_sent_ += len;
  if (stream.body_.empty() && stream.writableObserver() != nullptr) s.writable_.push_back(&stream);
  return 0;
}

int Session::onBeginHeaders(nghttp2_session* session, const nghttp2_frame* frame, void* p) {
  Session& s = self(p);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  if (s.failed_) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  Stream* stream = s.acquire(frame->hd.stream_id);
  nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, stream);
  return 0;
}

int Session::onHeader(nghttp2_session*, const nghttp2_frame* frame, nghttp2_rcbuf* name,
                      nghttp2_rcbuf* value, uint8_t, void* p) {
  Session& s = self(p);
  Stream* stream = s.streamFor(frame->hd.stream_id);
  if (stream == nullptr || s.failed_) return 0;
  if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
    stream->addHeader(name, value);
  } else {
    // Trailers: only counted.
    stream->header_bytes_ +=
        nghttp2_rcbuf_get_buf(name).len + nghttp2_rcbuf_get_buf(value).len + 32;
  }
  // An HPACK bomb: a few bytes on the wire that decode to a huge header list. Far past
  // the limit nobody is asking in good faith.
  if (stream->header_bytes_ > kBombFactor * uint64_t{s.settings_.max_header_list}) {
    LOG_INFO("HTTP/2 header list far over the limit: GOAWAY ENHANCE_YOUR_CALM");
    s.terminate(NGHTTP2_ENHANCE_YOUR_CALM);
    return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
  }
  return 0;
}

int Session::onBeginFrame(nghttp2_session*, const nghttp2_frame_hd* hd, void* p) {
  Session& s = self(p);
  if (s.failed_) return 0;
  bool empty_data =
      hd->type == NGHTTP2_DATA && hd->length == 0 && (hd->flags & NGHTTP2_FLAG_END_STREAM) == 0;
  bool empty_continuation = hd->type == NGHTTP2_CONTINUATION && hd->length == 0 &&
                            (hd->flags & NGHTTP2_FLAG_END_HEADERS) == 0;
  if (empty_data || empty_continuation) s.overFlood(s.flood_.onEmptyFrame(s.now_ms_));
  return 0;
}

int Session::onFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* p) {
  Session& s = self(p);
  if (s.failed_) return 0;
  switch (frame->hd.type) {
    case NGHTTP2_HEADERS: {
      Stream* stream = s.streamFor(frame->hd.stream_id);
      if (stream == nullptr || stream->closed()) return 0;
      bool end_stream = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
      if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        stream->finishHead(end_stream);
        s.owner_.onRequest(*stream);
      } else if (end_stream) {
        stream->onBodyEnd();  // trailers end the body
      }
      return 0;
    }
    case NGHTTP2_DATA: {
      Stream* stream = s.streamFor(frame->hd.stream_id);
      if (stream != nullptr && !stream->closed() &&
          (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
        stream->onBodyEnd();
      }
      return 0;
    }
    case NGHTTP2_RST_STREAM:
      s.overFlood(s.flood_.onReset(s.now_ms_));
      return 0;
    case NGHTTP2_SETTINGS:
    case NGHTTP2_PING:
      if ((frame->hd.flags & NGHTTP2_FLAG_ACK) == 0) s.overFlood(s.flood_.onControl(s.now_ms_));
      return 0;
    default:
      return 0;
  }
}

int Session::onDataChunk(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data,
                         size_t len, void* p) {
  Session& s = self(p);
  Stream* stream = s.streamFor(stream_id);
  if (stream == nullptr || stream->closed() || s.failed_ ||
      stream->request_state_ == Stream::RequestState::kHead) {
    s.consume(stream_id, len);  // dropped, so consumed at once
    return 0;
  }
  stream->onBodyData(std::string_view(reinterpret_cast<const char*>(data), len));
  return 0;
}

int Session::onStreamClose(nghttp2_session*, int32_t stream_id, uint32_t error_code, void* p) {
  Session& s = self(p);
  Stream* stream = s.streamFor(stream_id);
  if (stream == nullptr) return 0;
  (void)error_code;
  // A reset before our response ended: the handler learns it before the request goes.
  stream->close();
  s.streams_.retire(stream);
  s.owner_.onStreamClosed(*stream);
  return 0;
}

int Session::onFrameNotSent(nghttp2_session*, const nghttp2_frame*, int, void*) {
  return 0;  // e.g. HEADERS for a stream the peer reset meanwhile
}

int Session::onInvalidFrame(nghttp2_session*, const nghttp2_frame*, int, void* p) {
  Session& s = self(p);
  if (!s.failed_) s.overFlood(s.flood_.onEmptyFrame(s.now_ms_));
  return 0;
}

int Session::onFrameSent(nghttp2_session*, const nghttp2_frame* frame, void* p) {
  Session& s = self(p);
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    s.goaway_error_ = frame->goaway.error_code;
  } else if (frame->hd.type == NGHTTP2_RST_STREAM &&
             frame->rst_stream.error_code != NGHTTP2_NO_ERROR && !s.failed_) {
    // A stream we had to reset for the peer's fault costs like a reset the peer sent.
    s.overFlood(s.flood_.onReset(s.now_ms_));
  }
  return 0;
}

}  // namespace scalws::worker::http2
