// Drives an http2::Session in memory for the unit tests (and the fuzz target): a transport
// that collects what the session sends, raw frames built by hand for the malformed cases,
// a parser for what comes back, and a real nghttp2 client for the well-formed ones.
#pragma once

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/http_date.h"
#include "worker/http2/session.h"
#include "worker/net/byte_queue.h"
#include "worker/net/transport.h"

namespace scalws::worker::http2::testing {

// Collects bytes; file slices are read with pread.
class StringTransport final : public Transport {
 public:
  ssize_t read(char*, size_t) noexcept override {
    errno = EAGAIN;
    return -1;
  }
  ssize_t writev(const iovec* iov, int count) noexcept override {
    ssize_t n = 0;
    for (int i = 0; i < count; ++i) {
      data.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
      n += static_cast<ssize_t>(iov[i].iov_len);
    }
    return n;
  }
  ssize_t sendFile(int fd, uint64_t offset, size_t len) noexcept override {
    std::string buf(len, '\0');
    ssize_t n = pread(fd, buf.data(), len, static_cast<off_t>(offset));
    if (n > 0) data.append(buf.data(), static_cast<size_t>(n));
    return n;
  }
  bool zeroCopyFiles() const noexcept override { return false; }
  int fd() const noexcept override { return -1; }
  std::string data;
};

struct Frame {
  uint8_t type = 0;
  uint8_t flags = 0;
  int32_t stream = 0;
  std::string payload;
  uint32_t goawayError() const {
    return (static_cast<uint8_t>(payload[4]) << 24) | (static_cast<uint8_t>(payload[5]) << 16) |
           (static_cast<uint8_t>(payload[6]) << 8) | static_cast<uint8_t>(payload[7]);
  }
  uint32_t rstError() const {
    return (static_cast<uint8_t>(payload[0]) << 24) | (static_cast<uint8_t>(payload[1]) << 16) |
           (static_cast<uint8_t>(payload[2]) << 8) | static_cast<uint8_t>(payload[3]);
  }
};

inline std::vector<Frame> parseFrames(const std::string& bytes) {
  std::vector<Frame> frames;
  size_t pos = 0;
  while (pos + 9 <= bytes.size()) {
    size_t len = (static_cast<uint8_t>(bytes[pos]) << 16) |
                 (static_cast<uint8_t>(bytes[pos + 1]) << 8) | static_cast<uint8_t>(bytes[pos + 2]);
    if (pos + 9 + len > bytes.size()) break;
    Frame f;
    f.type = static_cast<uint8_t>(bytes[pos + 3]);
    f.flags = static_cast<uint8_t>(bytes[pos + 4]);
    f.stream = ((static_cast<uint8_t>(bytes[pos + 5]) & 0x7f) << 24) |
               (static_cast<uint8_t>(bytes[pos + 6]) << 16) |
               (static_cast<uint8_t>(bytes[pos + 7]) << 8) | static_cast<uint8_t>(bytes[pos + 8]);
    f.payload = bytes.substr(pos + 9, len);
    frames.push_back(std::move(f));
    pos += 9 + len;
  }
  return frames;
}

// The frame flags the hand-built HEADERS and DATA frames carry.
inline constexpr uint8_t kEndStream = NGHTTP2_FLAG_END_STREAM;
inline constexpr uint8_t kEndHeaders = NGHTTP2_FLAG_END_HEADERS;

// Raw frames, for what a well-behaved client library would never send.
inline std::string frame(uint8_t type, uint8_t flags, int32_t stream, const std::string& payload) {
  std::string f;
  f.push_back(static_cast<char>(payload.size() >> 16));
  f.push_back(static_cast<char>(payload.size() >> 8));
  f.push_back(static_cast<char>(payload.size()));
  f.push_back(static_cast<char>(type));
  f.push_back(static_cast<char>(flags));
  f.push_back(static_cast<char>((stream >> 24) & 0x7f));
  f.push_back(static_cast<char>(stream >> 16));
  f.push_back(static_cast<char>(stream >> 8));
  f.push_back(static_cast<char>(stream));
  return f + payload;
}

inline std::string u32(uint32_t v) {
  return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 8), static_cast<char>(v)};
}

inline std::string preface() {
  return std::string(NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN) +
         frame(NGHTTP2_SETTINGS, 0, 0, "");
}

// An HPACK encoder that keeps its dynamic table across blocks, like a client's.
class HpackEncoder {
 public:
  HpackEncoder() { nghttp2_hd_deflate_new(&deflater_, 4096); }
  ~HpackEncoder() { nghttp2_hd_deflate_del(deflater_); }
  std::string encode(const std::vector<std::pair<std::string, std::string>>& fields,
                     bool index = true) {
    std::vector<nghttp2_nv> nva;
    for (const auto& [n, v] : fields) {
      nva.push_back(
          {reinterpret_cast<uint8_t*>(const_cast<char*>(n.data())),
           reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())), n.size(), v.size(),
           static_cast<uint8_t>(index ? NGHTTP2_NV_FLAG_NONE : NGHTTP2_NV_FLAG_NO_INDEX)});
    }
    std::string out(nghttp2_hd_deflate_bound(deflater_, nva.data(), nva.size()), '\0');
    ssize_t n = nghttp2_hd_deflate_hd(deflater_, reinterpret_cast<uint8_t*>(out.data()), out.size(),
                                      nva.data(), nva.size());
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return out;
  }

 private:
  nghttp2_hd_deflater* deflater_ = nullptr;
};

inline std::vector<std::pair<std::string, std::string>> getRequest(
    const std::string& path, const std::string& method = "GET") {
  return {
      {":method", method}, {":scheme", "https"}, {":authority", "example.com"}, {":path", path}};
}

// Records what the session asks of its owner; `respond` decides each request's answer.
class TestOwner final : public SessionOwner {
 public:
  std::function<void(Stream&)> respond = [](Stream& s) {
    const HeaderField headers[] = {{"Content-Type", "text/plain"}};
    s.respond(200, headers, "hello", BodyLifetime::kStable);
  };
  void onRequest(Stream& stream) noexcept override {
    ++requests;
    last_path = std::string(stream.request().raw_path);
    if (stream.requestError() != 0) {
      errors.push_back(stream.requestError());
      stream.respond(stream.requestError(), {}, "error", BodyLifetime::kCopy);
      return;
    }
    respond(stream);
  }
  void onResponseFinished(Stream& stream) noexcept override { finished.push_back(stream.id()); }
  void onStreamClosed(Stream& stream) noexcept override { closed.push_back(stream.id()); }
  void onOutputPending() noexcept override { ++output_pending; }
  void onBodyTooLarge(Stream& stream) noexcept override {
    ++too_large;
    stream.respond(413, {}, "too large", BodyLifetime::kCopy);
  }

  int requests = 0;
  int output_pending = 0;
  int too_large = 0;
  std::string last_path;
  std::vector<uint16_t> errors;
  std::vector<int32_t> finished;
  std::vector<int32_t> closed;
};

// A Session with a TestOwner; feed() gives it bytes and returns the frames it answered.
class SessionHarness {
 public:
  explicit SessionHarness(const SessionSettings& settings = {})
      : session(owner, settings, date, pool, &memory), out(pool) {}

  bool feed(const std::string& bytes) {
    bool ok = session.receive(bytes.data(), bytes.size(), now_ms);
    session.send(out);
    out.flush(transport);
    return ok;
  }
  // Frames sent since the last call.
  std::vector<Frame> take() {
    session.send(out);
    out.flush(transport);
    std::vector<Frame> frames = parseFrames(transport.data);
    transport.data.clear();
    return frames;
  }
  static const Frame* find(const std::vector<Frame>& frames, uint8_t type) {
    for (const Frame& f : frames) {
      if (f.type == type) return &f;
    }
    return nullptr;
  }

  TestOwner owner;
  common::DateCache date;
  BufferPool pool;
  CodecMemory memory;  // as a worker's loop gives nghttp2
  Session session;
  ByteQueue out;
  StringTransport transport;
  uint64_t now_ms = 1'000'000;
};

// A real nghttp2 client, for responses as a client library understands them.
class Client {
 public:
  struct Response {
    int status = 0;
    std::map<std::string, std::string> headers;
    std::string body;
    bool closed = false;
    uint32_t close_error = 0;
  };

  // `settings`: the client's first SETTINGS frame (the connection preface).
  explicit Client(std::vector<nghttp2_settings_entry> settings = {}) {
    nghttp2_session_callbacks* cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(
        cb, [](nghttp2_session*, const nghttp2_frame* f, const uint8_t* n, size_t nl,
               const uint8_t* v, size_t vl, uint8_t, void* p) {
          auto* c = static_cast<Client*>(p);
          std::string name(reinterpret_cast<const char*>(n), nl);
          std::string value(reinterpret_cast<const char*>(v), vl);
          Response& r = c->responses[f->hd.stream_id];
          if (name == ":status") {
            r.status = std::stoi(value);
          } else {
            r.headers[name] = value;
          }
          return 0;
        });
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
        cb, [](nghttp2_session*, uint8_t, int32_t id, const uint8_t* d, size_t len, void* p) {
          static_cast<Client*>(p)->responses[id].body.append(reinterpret_cast<const char*>(d), len);
          return 0;
        });
    nghttp2_session_callbacks_set_on_stream_close_callback(
        cb, [](nghttp2_session*, int32_t id, uint32_t error, void* p) {
          Response& r = static_cast<Client*>(p)->responses[id];
          r.closed = true;
          r.close_error = error;
          return 0;
        });
    nghttp2_session_callbacks_set_on_frame_recv_callback(
        cb, [](nghttp2_session*, const nghttp2_frame* f, void* p) {
          if (f->hd.type == NGHTTP2_GOAWAY) {
            static_cast<Client*>(p)->goaway_error = static_cast<int64_t>(f->goaway.error_code);
          }
          return 0;
        });
    nghttp2_session_client_new(&session_, cb, this);
    nghttp2_session_callbacks_del(cb);
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
  }
  ~Client() { nghttp2_session_del(session_); }

  int32_t get(const std::string& path, const std::string& method = "GET",
              std::vector<std::pair<std::string, std::string>> extra = {}) {
    auto fields = getRequest(path, method);
    fields.insert(fields.end(), extra.begin(), extra.end());
    std::vector<nghttp2_nv> nva;
    for (auto& [n, v] : fields) {
      nva.push_back({reinterpret_cast<uint8_t*>(n.data()), reinterpret_cast<uint8_t*>(v.data()),
                     n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
    }
    held_.push_back(std::move(fields));
    return nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(), nullptr, nullptr);
  }
  // Bytes the client wants to send.
  std::string output() {
    std::string out;
    const uint8_t* data;
    ssize_t n;
    while ((n = nghttp2_session_mem_send(session_, &data)) > 0) {
      out.append(reinterpret_cast<const char*>(data), static_cast<size_t>(n));
    }
    return out;
  }
  void input(const std::string& bytes) {
    nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(bytes.data()),
                             bytes.size());
  }
  // Runs the two sessions against each other until neither has anything to say.
  void exchange(SessionHarness& server, int rounds = 50) {
    for (int i = 0; i < rounds; ++i) {
      std::string to_server = output();
      if (!to_server.empty()) server.feed(to_server);
      server.session.send(server.out);
      server.out.flush(server.transport);
      std::string to_client = std::move(server.transport.data);
      server.transport.data.clear();
      if (to_server.empty() && to_client.empty()) break;
      input(to_client);
    }
    server.session.collect();
  }
  nghttp2_session* raw() { return session_; }

  std::map<int32_t, Response> responses;
  int64_t goaway_error = -1;

 private:
  nghttp2_session* session_ = nullptr;
  std::vector<std::vector<std::pair<std::string, std::string>>> held_;
};

}  // namespace scalws::worker::http2::testing
