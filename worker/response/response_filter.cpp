#include "worker/response/response_filter.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "worker/http/status_text.h"
#include "worker/loop/worker_loop.h"
#include "worker/response/compress/coding_choice.h"
#include "worker/response/compress/encoded_head.h"

namespace scalws::worker {

// Retained bodies up to this size are compressed at once, like copied ones.
constexpr size_t kInlineRetained = 64 * 1024;

ResponseFilter& ResponseFilters::take() {
  if (free_.empty()) {
    all_.push_back(std::make_unique<ResponseFilter>(*this));
    return *all_.back();
  }
  ResponseFilter* f = free_.back();
  free_.pop_back();
  return *f;
}

ResponseWriter& ResponseFilter::attach(Request& request, ResponseWriter& client,
                                       const ResponseRules& rules) {
  ResponseFilter& filter = request.loop->local<ResponseFilters>().take();
  filter.start(request, client, rules);
  return filter;
}

void ResponseFilter::start(Request& request, ResponseWriter& client, const ResponseRules& rules) {
  state_ = State::kHead;
  request_ = &request;
  client_ = &client;
  rules_ = &rules;
  client.setInFlight(this);
}

void ResponseFilter::sendHead(const ResponseHead& head) noexcept {
  if (state_ != State::kHead) {
    if (state_ == State::kPassing) client_->sendHead(head);  // the stream ignores it
    return;
  }
  state_ = State::kPassing;
  // Interim and protocol-switching answers (101 starts a tunnel) go as they are.
  if (head.status < 200) {
    client_->sendHead(head);
    return;
  }
  ResponseHead out = head;
  bool edited = false;
  if (const HeaderEdits* edits = rules_->headers()) {
    edits->apply(head.headers, fields_);
    edited = true;
  }
  if (rules_->compress() != nullptr) {
    if (!edited) fields_.assign(head.headers.begin(), head.headers.end());
    edited = true;
    if (beginCompression(head, fields_)) out.content_length.reset();
  }
  if (edited) out.headers = fields_;
  client_->sendHead(out);
}

bool ResponseFilter::beginCompression(const ResponseHead& head, std::vector<HeaderField>& fields) {
  const compress::CompressRules& rules = *rules_->compress();
  compress::CompressRules::Decision d =
      rules.decide(*request_, head.status, fields, head.content_length);
  if (!d.varies) return false;
  compress::addVaryAcceptEncoding(fields);
  if (!d.encoding) return false;
  compress::weakenEtag(fields, *request_->arena);
  if (head.status == 304) return false;  // validators only: it has no body to encode
  if (!request_->isHead() && statusHasBody(head.status)) {
    compress::Compressor::Params params =
        compress::Compressor::paramsFor(*d.encoding, rules.level(*d.encoding), head.content_length);
    compressor_ = home_.compressors().take(params);
    if (compressor_ == nullptr) {
      LOG_WARN("compress: no %.*s compressor (out of memory): the response goes uncompressed",
               static_cast<int>(compress::encodingName(*d.encoding).size()),
               compress::encodingName(*d.encoding).data());
      return false;
    }
    state_ = State::kCompressing;
  }
  // A HEAD gets the head a GET would (RFC 9110 §9.3.2), without the work.
  compress::dropFields(fields, "accept-ranges");  // ranges are of the identity bytes only
  fields.push_back(HeaderField{"Content-Encoding", compress::encodingName(*d.encoding)});
  return true;
}

void ResponseFilter::onCompressed(std::string_view bytes) noexcept {
  if (state_ == State::kCompressing) client_->sendBody(bytes, BodyLifetime::kCopy);
}

bool ResponseFilter::compress(std::string_view input, bool end) {
  if (!compressor_->write(input, end, *this)) {
    if (state_ == State::kCompressing) fail();
    return false;
  }
  return state_ == State::kCompressing;
}

void ResponseFilter::sendBody(std::string_view data, BodyLifetime lifetime) noexcept {
  if (state_ != State::kCompressing) {
    if (state_ == State::kPassing || state_ == State::kHead) client_->sendBody(data, lifetime);
    return;
  }
  ++busy_;
  if (pump(false) && !data.empty()) compress(data, false);
  leave();
}

void ResponseFilter::sendBodyRetained(std::string_view data, RefCounted* owner) noexcept {
  if (state_ != State::kCompressing) {
    if (state_ == State::kPassing || state_ == State::kHead) client_->sendBodyRetained(data, owner);
    return;
  }
  if (data.size() <= kInlineRetained) {
    sendBody(data, BodyLifetime::kCopy);
    return;
  }
  ++busy_;
  if (pump(false)) {
    pending_data_ = data.data();
    pending_left_ = data.size();
    pending_owner_ = owner;
    if (owner != nullptr) owner->retain();
    pump(true);
  }
  leave();
}

void ResponseFilter::sendFile(const FileSlice& file) noexcept {
  if (state_ != State::kCompressing) {
    if (state_ == State::kPassing || state_ == State::kHead) client_->sendFile(file);
    return;
  }
  if (file.length == 0) return;
  ++busy_;
  if (pump(false)) {
    pending_fd_ = file.fd;
    pending_offset_ = file.offset;
    pending_left_ = file.length;
    pending_owner_ = file.owner;
    if (file.owner != nullptr) file.owner->retain();
    pump(true);
  }
  leave();
}

bool ResponseFilter::pump(bool bounded) {
  while (pending_left_ > 0) {
    if (bounded && client_->queuedBytes() > kHighWater) {
      if (!waiting_) {
        waiting_ = true;
        client_->notifyWhenWritable(this);
      }
      return true;
    }
    size_t n = static_cast<size_t>(std::min<uint64_t>(pending_left_, kChunk));
    std::string_view chunk;
    if (pending_fd_ >= 0) {
      ssize_t got =
          ::pread(pending_fd_, home_.readBuffer(), n, static_cast<off_t>(pending_offset_));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        // The file shrank or cannot be read: what was promised cannot be sent.
        LOG_ERROR("compress: reading a file to compress failed: %s",
                  got == 0 ? "it shrank" : strerror(errno));
        fail();
        return false;
      }
      chunk = std::string_view(home_.readBuffer(), static_cast<size_t>(got));
    } else {
      chunk = std::string_view(pending_data_, n);
      pending_data_ += n;
    }
    pending_offset_ += chunk.size();
    pending_left_ -= chunk.size();
    if (!compress(chunk, false)) return false;
  }
  releasePending();
  return true;
}

void ResponseFilter::releasePending() {
  pending_fd_ = -1;
  pending_data_ = nullptr;
  pending_offset_ = 0;
  pending_left_ = 0;
  if (RefCounted* owner = pending_owner_) {
    pending_owner_ = nullptr;
    owner->release();
  }
}

void ResponseFilter::finish() noexcept {
  if (state_ == State::kPassing || state_ == State::kHead) {
    ResponseWriter* client = client_;
    recycle();
    client->finish();
    return;
  }
  if (state_ != State::kCompressing) return;
  if (hasPending()) {
    finish_pending_ = true;  // once the pending input is compressed (onWritable)
    return;
  }
  finishCompressed();
}

void ResponseFilter::finishCompressed() {
  ++busy_;
  bool alive = compress({}, true);
  --busy_;
  if (!alive) {
    if (busy_ == 0 && state_ == State::kDead) recycle();
    return;
  }
  ResponseWriter* client = client_;
  recycle();
  client->finish();
}

void ResponseFilter::abortResponse() noexcept {
  if (state_ == State::kFree || state_ == State::kDead) return;
  ResponseWriter* client = client_;
  recycle();
  client->abortResponse();
}

void ResponseFilter::fail() {
  // The handler may still be producing (a proxied body): it must stop, as if the client
  // had gone.
  InFlight* handler = handler_;
  handler_ = nullptr;
  ResponseWriter* client = client_;
  state_ = State::kDead;
  if (handler != nullptr) handler->abort();
  client->abortResponse();
}

size_t ResponseFilter::queuedBytes() const noexcept {
  if (state_ == State::kFree || state_ == State::kDead) return 0;
  return client_->queuedBytes() + static_cast<size_t>(pending_left_);
}

void ResponseFilter::notifyWhenWritable(WritableObserver* observer) noexcept {
  if (state_ == State::kPassing || state_ == State::kHead) {
    client_->notifyWhenWritable(observer);
    return;
  }
  if (state_ != State::kCompressing) return;
  observer_ = observer;
  if (!waiting_) {
    waiting_ = true;
    client_->notifyWhenWritable(this);
  }
}

void ResponseFilter::onWritable() noexcept {
  waiting_ = false;
  if (state_ != State::kCompressing) return;
  if (hasPending()) {
    ++busy_;
    bool alive = pump(true);
    --busy_;
    if (!alive) {
      if (busy_ == 0 && state_ == State::kDead) recycle();
      return;
    }
    if (hasPending()) return;  // waiting for the stream again
    if (finish_pending_) {
      finishCompressed();
      return;
    }
  }
  if (WritableObserver* o = observer_) {
    observer_ = nullptr;
    o->onWritable();
  }
}

void ResponseFilter::setBodyReadPaused(bool paused) noexcept {
  if (state_ != State::kFree && state_ != State::kDead) client_->setBodyReadPaused(paused);
}

void ResponseFilter::abort() noexcept {
  if (state_ == State::kFree || state_ == State::kDead) return;
  InFlight* handler = handler_;
  handler_ = nullptr;
  state_ = State::kDead;
  if (busy_ == 0) recycle();
  if (handler != nullptr) handler->abort();
}

void ResponseFilter::leave() {
  if (--busy_ == 0 && state_ == State::kDead) recycle();
}

void ResponseFilter::recycle() {
  releasePending();
  if (compressor_) home_.compressors().give(std::move(compressor_));
  state_ = State::kFree;
  busy_ = 0;
  request_ = nullptr;
  client_ = nullptr;
  rules_ = nullptr;
  handler_ = nullptr;
  observer_ = nullptr;
  waiting_ = false;
  finish_pending_ = false;
  fields_.clear();
  home_.recycle(*this);
}

}  // namespace scalws::worker
