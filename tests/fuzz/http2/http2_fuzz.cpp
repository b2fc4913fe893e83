// Fuzz target: the HTTP/2 session (nghttp2 plus our streams, limits and response paths)
// fed arbitrary bytes after the client preface, split where the input says. Requests are
// answered in the ways handlers answer: at once, from a file, streamed, later (after the
// next chunk), or by reading the body — chosen by the stream id, so the fuzzer reaches all.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/http_date.h"
#include "worker/http/path_normalizer.h"
#include "worker/http2/session.h"
#include "worker/net/byte_queue.h"
#include "worker/net/transport.h"

namespace {

namespace common = scalws::common;
using namespace scalws::worker;
using namespace scalws::worker::http2;

class NullTransport final : public Transport {
 public:
  ssize_t read(char*, size_t) noexcept override { return 0; }
  ssize_t writev(const iovec* iov, int count) noexcept override {
    ssize_t n = 0;
    for (int i = 0; i < count; ++i) n += static_cast<ssize_t>(iov[i].iov_len);
    return n;
  }
  ssize_t sendFile(int, uint64_t, size_t len) noexcept override {
    return static_cast<ssize_t>(len);
  }
  bool zeroCopyFiles() const noexcept override { return false; }
  int fd() const noexcept override { return -1; }
};

struct FileOwner : RefCounted {
  void onLastRelease() noexcept override {}
};

class Owner final : public SessionOwner, public BodySink {
 public:
  explicit Owner(int file_fd) : file_fd_(file_fd) {}
  void onRequest(Stream& s) noexcept override {
    Request& r = s.request();
    Arena arena;
    (void)normalizePath(r.raw_path, arena);
    if (s.requestError() != 0) {
      s.respond(s.requestError(), {}, "error", BodyLifetime::kCopy);
      return;
    }
    s.setBodyLimit(4096);
    switch ((s.id() / 2) % 5) {
      case 0:
        s.respond(200, {}, "hello", BodyLifetime::kStable);
        break;
      case 1: {
        ResponseHead head;
        head.content_length = 3000;
        s.sendHead(head);
        s.sendFile(FileSlice{file_fd_, 100, 3000, &file_owner_});
        s.finish();
        break;
      }
      case 2: {
        ResponseHead head;
        s.sendHead(head);
        for (int i = 0; i < 5; ++i) s.sendBody(std::string(700, 'x'), BodyLifetime::kCopy);
        s.finish();
        break;
      }
      case 3:
        held_.push_back(&s);  // answered after the next chunk, unless reset first
        break;
      default:
        r.setBodySink(this);
        held_.push_back(&s);
        break;
    }
  }
  void onResponseFinished(Stream&) noexcept override {}
  void onStreamClosed(Stream& s) noexcept override {
    for (auto& h : held_) {
      if (h == &s) h = nullptr;
    }
  }
  void onOutputPending() noexcept override {}
  void onBodyTooLarge(Stream& s) noexcept override {
    for (auto& h : held_) {
      if (h == &s) h = nullptr;
    }
    s.respond(413, {}, "", BodyLifetime::kStable);
  }
  void onBodyData(std::string_view d) noexcept override { body_bytes_ += d.size(); }
  void onBodyEnd() noexcept override {}
  void answerHeld() {
    for (Stream* s : held_) {
      if (s != nullptr) s->respond(200, {}, "later", BodyLifetime::kStable);
    }
    held_.clear();
  }

 private:
  int file_fd_;
  FileOwner file_owner_;
  std::vector<Stream*> held_;
  size_t body_bytes_ = 0;
};

int makeFile() {
  static int fd = [] {
    int f = memfd_create("h2fuzz", 0);
    std::string data(8192, 'f');
    if (write(f, data.data(), data.size()) < 0) return -1;
    return f;
  }();
  return fd;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t step = data[0] % 64 + 1;
  if ((data[0] & 0xc0) == 0xc0) step = size;
  bool with_preface = (data[0] & 0x40) == 0 || (data[0] & 0xc0) == 0xc0;
  ++data;
  --size;

  std::string input;
  if (with_preface) input.assign(NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
  input.append(reinterpret_cast<const char*>(data), size);

  common::DateCache date;
  BufferPool pool;
  CodecMemory memory;  // as a worker's loop gives nghttp2
  Owner owner(makeFile());
  SessionSettings settings;
  settings.max_header_list = 2048;
  settings.max_headers = 16;
  NullTransport transport;
  {
    ByteQueue out(pool);
    Session session(owner, settings, date, pool, &memory);
    uint64_t now = 1000;
    for (size_t fed = 0; fed < input.size(); fed += step) {
      size_t n = std::min(step, input.size() - fed);
      bool ok = session.receive(input.data() + fed, n, now += 7);
      owner.answerHeld();
      session.send(out);
      out.flush(transport);
      session.collect();
      if (!ok || (!session.wantsRead() && !session.wantsWrite())) break;
    }
    session.abortAll();
  }
  return 0;
}
