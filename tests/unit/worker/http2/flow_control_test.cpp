// Request bodies under manual flow control: the client's window reopens as the handler
// takes the bytes, so a handler that pauses its body holds the client at its window.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/worker/http2/h2_test_peer.h"
#include "worker/http2/session.h"

namespace scalws::worker::http2 {
namespace {

using testing::Client;
using testing::SessionHarness;

class CountingSink final : public BodySink {
 public:
  void onBodyData(std::string_view data) noexcept override { bytes += data.size(); }
  void onBodyEnd() noexcept override { ++ends; }
  uint64_t bytes = 0;
  int ends = 0;
};

// Submits a POST of `size` bytes; the client sends as its windows allow.
int32_t post(Client& client, uint64_t* remaining) {
  nghttp2_data_provider provider;
  provider.source.ptr = remaining;
  provider.read_callback = [](nghttp2_session*, int32_t, uint8_t* buf, size_t len, uint32_t* flags,
                              nghttp2_data_source* src, void*) -> ssize_t {
    auto* left = static_cast<uint64_t*>(src->ptr);
    size_t n = static_cast<size_t>(std::min<uint64_t>(len, *left));
    std::memset(buf, 'b', n);
    *left -= n;
    if (*left == 0) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  };
  std::string names[] = {":method", ":scheme", ":authority", ":path"};
  std::string values[] = {"POST", "https", "example.com", "/upload"};
  nghttp2_nv nva[4];
  for (int i = 0; i < 4; ++i) {
    nva[i] = {reinterpret_cast<uint8_t*>(names[i].data()),
              reinterpret_cast<uint8_t*>(values[i].data()), names[i].size(), values[i].size(),
              NGHTTP2_NV_FLAG_NONE};
  }
  return nghttp2_submit_request(client.raw(), nullptr, nva, 4, &provider, nullptr);
}

TEST(Http2FlowControl, PausedBodyHoldsTheClientAtTheStreamWindow) {
  SessionSettings settings;
  SessionHarness server(settings);
  Client client;
  CountingSink sink;
  Stream* stream = nullptr;
  server.owner.respond = [&](Stream& s) {
    s.request().setBodySink(&sink);
    s.setBodyReadPaused(true);
    stream = &s;
  };
  uint64_t remaining = 1 << 20;
  int32_t id = post(client, &remaining);
  client.exchange(server);
  ASSERT_NE(stream, nullptr);
  // Without a WINDOW_UPDATE the client stops at the window our SETTINGS gave it.
  EXPECT_GT(sink.bytes, 0u);
  EXPECT_LE(sink.bytes, settings.stream_window);
  EXPECT_EQ(stream->unconsumedBytes(), sink.bytes);
  EXPECT_GT(remaining, 0u);
  EXPECT_FALSE(stream->requestComplete());

  stream->setBodyReadPaused(false);
  client.exchange(server, 500);
  EXPECT_EQ(sink.bytes, 1u << 20);
  EXPECT_EQ(sink.ends, 1);
  EXPECT_EQ(remaining, 0u);
  stream->respond(200, {}, "done", BodyLifetime::kCopy);
  client.exchange(server);
  EXPECT_EQ(client.responses[id].status, 200);
}

TEST(Http2FlowControl, AllPausedBodiesTogetherStopAtTheConnectionWindow) {
  SessionSettings settings;
  SessionHarness server(settings);
  Client client;
  std::map<int32_t, CountingSink> sinks;
  std::vector<Stream*> streams;
  server.owner.respond = [&](Stream& s) {
    s.request().setBodySink(&sinks[s.id()]);
    s.setBodyReadPaused(true);
    streams.push_back(&s);
  };
  constexpr int kStreams = 16;
  std::vector<uint64_t> remaining(kStreams, 512 * 1024);
  for (int i = 0; i < kStreams; ++i) post(client, &remaining[static_cast<size_t>(i)]);
  client.exchange(server, 500);
  uint64_t held = 0;
  for (auto& [id, sink] : sinks) held += sink.bytes;
  EXPECT_GT(held, 0u);
  EXPECT_LE(held, settings.connection_window);
  // Freeing them lets everything through, and the connection window is not leaked.
  for (Stream* s : streams) s->setBodyReadPaused(false);
  client.exchange(server, 2000);
  for (auto& [id, sink] : sinks) {
    EXPECT_EQ(sink.bytes, 512u * 1024) << "stream " << id;
    EXPECT_EQ(sink.ends, 1);
  }
}

TEST(Http2FlowControl, ResetStreamsGiveTheirHeldBytesBackToTheConnection) {
  SessionSettings settings;
  SessionHarness server(settings);
  Client client;
  std::map<int32_t, CountingSink> sinks;
  CountingSink last_sink;
  constexpr int kHolders = 5;  // together they can hold the whole connection window
  int seen = 0;
  server.owner.respond = [&](Stream& s) {
    if (seen++ < kHolders) {
      s.request().setBodySink(&sinks[s.id()]);
      s.setBodyReadPaused(true);  // holds its bytes until the client resets it
    } else {
      s.request().setBodySink(&last_sink);
    }
  };
  std::vector<uint64_t> left(kHolders, 4 << 20);
  std::vector<int32_t> ids;
  for (int i = 0; i < kHolders; ++i) ids.push_back(post(client, &left[static_cast<size_t>(i)]));
  client.exchange(server, 500);
  uint64_t held = 0;
  for (auto& [id, sink] : sinks) held += sink.bytes;
  ASSERT_GT(held, settings.connection_window - settings.stream_window);
  for (int32_t id : ids) {
    nghttp2_submit_rst_stream(client.raw(), NGHTTP2_FLAG_NONE, id, NGHTTP2_CANCEL);
  }
  client.exchange(server);
  // The connection window must be whole again: a body bigger than it gets through.
  uint64_t last_left = 2 * uint64_t{settings.connection_window};
  post(client, &last_left);
  client.exchange(server, 2000);
  EXPECT_EQ(last_sink.bytes, 2 * uint64_t{settings.connection_window});
  EXPECT_EQ(last_sink.ends, 1);
}

TEST(Http2FlowControl, BodiesNobodyReadsAreConsumedAtOnce) {
  SessionHarness server;
  Client client;
  // The default owner answers without a sink: the body is dropped as it arrives.
  uint64_t left = 3 << 20;
  int32_t id = post(client, &left);
  client.exchange(server, 2000);
  EXPECT_EQ(left, 0u);
  EXPECT_EQ(client.responses[id].status, 200);
}

}  // namespace
}  // namespace scalws::worker::http2
