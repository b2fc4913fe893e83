// listen.quic: the QUIC limits of a listener with http3 = true (see QuicConfig).
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {
namespace {

// Windows below a full-sized packet would stall every stream; above 1 GiB is a typo.
constexpr Bytes kMinWindow = 16 * 1024;
constexpr Bytes kMaxWindow = 1024ull * 1024 * 1024;
// RFC 9000 §4.6: a stream count past 2^60 cannot be encoded; far fewer make sense.
constexpr int64_t kMaxStreams = 10'000;

void readWindow(TableReader& table, std::string_view key, Bytes& out) {
  Bytes bytes = 0;
  if (!table.readSize(key, bytes)) return;
  if (bytes < kMinWindow || bytes > kMaxWindow) {
    table.error(*table.get(key), key, "must be between 16k and 1g");
    return;
  }
  out = bytes;
}

void readTimeout(TableReader& table, std::string_view key, Milliseconds& out) {
  Milliseconds ms = 0;
  if (!table.readDuration(key, ms)) return;
  if (ms < 100) {
    table.error(*table.get(key), key, "must be at least 100ms");
    return;
  }
  out = ms;
}

}  // namespace

void parseQuicTable(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                    QuicConfig& quic) {
  quic.where = value.where;
  TableReader table(value, path, ctx);
  table.readEnum<QuicConfig::Retry>(
      "retry",
      {{"under_load", QuicConfig::Retry::kUnderLoad}, {"always", QuicConfig::Retry::kAlways}},
      quic.retry);
  table.readInteger("retry_above", 0, 1'000'000, quic.retry_above);
  table.readInteger("max_streams", 1, kMaxStreams, quic.max_streams);
  readWindow(table, "stream_window", quic.stream_window);
  readWindow(table, "connection_window", quic.connection_window);
  readTimeout(table, "idle_timeout", quic.idle_timeout);
  readTimeout(table, "handshake_timeout", quic.handshake_timeout);
  table.readBool("early_data", quic.early_data);
  if (quic.connection_window < quic.stream_window) {
    table.tableError("connection_window must be at least stream_window");
  }
  table.finish();
}

}  // namespace scalws::common::config
