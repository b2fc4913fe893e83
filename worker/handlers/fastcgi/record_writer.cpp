#include "worker/handlers/fastcgi/record_writer.h"

#include <algorithm>

namespace scalws::worker::fastcgi {

void encodeHeader(const RecordHeader& h, uint8_t* out) {
  out[0] = h.version;
  out[1] = static_cast<uint8_t>(h.type);
  out[2] = static_cast<uint8_t>(h.request_id >> 8);
  out[3] = static_cast<uint8_t>(h.request_id & 0xff);
  out[4] = static_cast<uint8_t>(h.content_length >> 8);
  out[5] = static_cast<uint8_t>(h.content_length & 0xff);
  out[6] = h.padding_length;
  out[7] = 0;
}

RecordHeader decodeHeader(const uint8_t* in) {
  RecordHeader h;
  h.version = in[0];
  h.type = static_cast<RecordType>(in[1]);
  h.request_id = static_cast<uint16_t>((in[2] << 8) | in[3]);
  h.content_length = static_cast<uint16_t>((in[4] << 8) | in[5]);
  h.padding_length = in[6];
  return h;
}

namespace {

void appendHeader(std::string& out, RecordType type, size_t content_length) {
  RecordHeader h;
  h.type = type;
  h.content_length = static_cast<uint16_t>(content_length);
  uint8_t bytes[kHeaderSize];
  encodeHeader(h, bytes);
  out.append(reinterpret_cast<const char*>(bytes), kHeaderSize);
}

void appendLength(std::string& out, size_t n) {
  if (n < 128) {
    out.push_back(static_cast<char>(n));
    return;
  }
  // §3.4: a four-byte length has its high bit set; 31 bits remain.
  out.push_back(static_cast<char>(((n >> 24) & 0x7f) | 0x80));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
}

}  // namespace

void appendBeginRequest(std::string& out, bool keep_conn) {
  appendHeader(out, RecordType::kBeginRequest, 8);
  const char body[8] = {
      0, static_cast<char>(Role::kResponder), keep_conn ? char{kKeepConn} : char{0}, 0, 0, 0, 0, 0};
  out.append(body, sizeof(body));
}

void appendPairLengths(std::string& out, size_t name_length, size_t value_length) {
  appendLength(out, name_length);
  appendLength(out, value_length);
}

void appendNameValue(std::string& out, std::string_view name, std::string_view value) {
  appendPairLengths(out, name.size(), value.size());
  out.append(name);
  out.append(value);
}

void appendStream(std::string& out, RecordType type, std::string_view content) {
  while (!content.empty()) {
    size_t n = std::min(content.size(), kMaxContent);
    appendHeader(out, type, n);
    out.append(content.substr(0, n));
    content.remove_prefix(n);
  }
}

void appendEndOfStream(std::string& out, RecordType type) {
  appendHeader(out, type, 0);
}

}  // namespace scalws::worker::fastcgi
