// What an HTTP/2 and an HTTP/3 stream do alike with their codec. nghttp2 and nghttp3 have
// the same shapes (reference-counted field buffers, a name/value array whose entries may
// point at bytes the codec does not copy), so one template keeps the request's field
// buffers alive, builds the codec's array for a response head, queues file slices in the
// protocol's body buffer and passes what the stream hears on to its session. Templated,
// not virtual: every call is resolved at compile time, as it was in each protocol's stream.
//
// `Codec` names one protocol's types and its library's calls:
//   Session, Stream (the class deriving from CodecStream<Codec>), Body (its response
//   buffer, constructed from the loop's BufferPool), StreamId with kNoId, kVersion, and
//   the buffer calls of an RcbufCalls.
// The Session gives streams: streamOutputChanged(), streamFinished(Stream&) and
// streamBodyTooLarge(Stream&).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "worker/http/multiplexed_stream.h"
#include "worker/http/pseudo_header_request.h"
#include "worker/http/stream_list.h"

namespace scalws::worker {

class BufferPool;

// A codec library's reference-counted buffers and name/value entries, through its own
// functions (nghttp2's and nghttp3's have the same shapes). `kNoCopy`: the entry flags that
// say name and value outlive the call.
template <class RcbufT, class NvT, auto kGetBuf, auto kIsStatic, auto kIncref, auto kDecref,
          uint8_t kNoCopyFlags>
struct RcbufCalls {
  using Rcbuf = RcbufT;
  using Nv = NvT;
  static constexpr uint8_t kNoCopy = kNoCopyFlags;
  static std::string_view view(Rcbuf* buf) {
    auto v = kGetBuf(buf);
    return std::string_view(reinterpret_cast<const char*>(v.base), v.len);
  }
  static bool isStatic(const Rcbuf* buf) { return kIsStatic(buf) != 0; }
  static void incref(Rcbuf* buf) { kIncref(buf); }
  static void decref(Rcbuf* buf) { kDecref(buf); }
};

template <class Codec>
class CodecStream : public MultiplexedStream {
 public:
  using Session = typename Codec::Session;
  using Stream = typename Codec::Stream;
  using Rcbuf = typename Codec::Rcbuf;
  using Nv = typename Codec::Nv;
  using StreamId = typename Codec::StreamId;

  StreamId id() const { return id_; }

 protected:
  CodecStream(Session& session, BufferPool& pool)
      : MultiplexedStream(1024), session_(session), body_(pool) {
    held_.reserve(32);
    nva_.reserve(12);
  }
  ~CodecStream() override = default;

  // MultiplexedStream
  void outputChanged() noexcept final { session_.streamOutputChanged(); }
  void bodyTooLarge() noexcept final { session_.streamBodyTooLarge(self()); }
  bool open() const noexcept final { return !closed(); }
  void queueFile(const FileSlice& file) noexcept final { body_.appendFile(file); }
  void responseEnded() noexcept final { session_.streamFinished(self()); }

  // The stream is over for us (the codec closed it, or the connection dies).
  bool closed() const { return responseState() == ResponseState::kDead; }

  // One request field as the codec decoded it.
  struct Field {
    std::string_view name;
    std::string_view value;
    bool keep;  // false: not to be stored (see countField)
  };
  // Counts the field against the head's limits (RFC 9113 §6.5.2, RFC 9114 §4.2.2: its
  // size is its name, its value and 32 bytes) and, when it is to be stored, holds its
  // buffers until the stream is recycled instead of copying the bytes (static-table names
  // are not reference counted).
  Field takeField(Rcbuf* name_buf, Rcbuf* value_buf, uint64_t max_bytes, uint32_t max_fields) {
    Field f{Codec::view(name_buf), Codec::view(value_buf), false};
    if (!countField(f.name.size() + f.value.size() + 32, max_bytes, max_fields)) return f;
    if (!Codec::isStatic(name_buf)) {
      Codec::incref(name_buf);
      held_.push_back(name_buf);
    }
    Codec::incref(value_buf);
    held_.push_back(value_buf);
    f.keep = true;
    return f;
  }

  // The head is complete (the codec's end of headers).
  void finishHead(bool end_stream) {
    MultiplexedStream::finishHead(Codec::kVersion, pseudo_, end_stream);
  }

  // The codec's array for `fields` (views into the arena: the codec need not copy them).
  void setNva(std::span<const HeaderField> fields) {
    nva_.clear();
    for (const HeaderField& f : fields) addNv(f.name, f.value);
  }
  void addNv(std::string_view name, std::string_view value) {
    nva_.push_back(Nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                      reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                      value.size(), Codec::kNoCopy});
  }
  // An interim (1xx) head into nva_: false when none may go out now (the stream is over,
  // the final head went, or `status` is not an interim one the writer may send).
  bool interimNva(uint16_t status, std::span<const HeaderField> headers) {
    if (closed() || responseState() != ResponseState::kNone || status < 102 || status > 199) {
      return false;
    }
    setNva(interimFields(status, headers));
    return true;
  }

  // Gives the codec's buffers back and resets the request and response sides: ready for
  // the next stream. The protocol resets its own fields besides.
  void recycleShared() {
    for (Rcbuf* b : held_) Codec::decref(b);
    held_.clear();
    body_.clear();
    reset();
    request_.resetForReuse();
    resetRequestSide();
    nva_.clear();
    pseudo_ = {};
    id_ = Codec::kNoId;
  }

  Session& session_;
  StreamId id_ = Codec::kNoId;
  std::vector<Rcbuf*> held_;  // buffers the request's views point into
  PseudoHeaders pseudo_;
  typename Codec::Body body_;
  std::vector<Nv> nva_;

 private:
  friend class StreamList<Stream>;

  Stream& self() { return static_cast<Stream&>(*this); }

  Stream* prev_ = nullptr;  // the session's active or closed list
  Stream* next_ = nullptr;
};

}  // namespace scalws::worker
