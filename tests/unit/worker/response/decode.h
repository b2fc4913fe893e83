// Decoders for what the compressors wrote, so the tests check bytes a client would read.
#pragma once

#include <brotli/decode.h>
#include <zlib.h>
#include <zstd.h>

#include <optional>
#include <string>
#include <string_view>

namespace scalws::worker::testing {

// nullopt when `data` is not one complete gzip member.
inline std::optional<std::string> gunzip(std::string_view data) {
  z_stream z{};
  if (inflateInit2(&z, 16 + 15) != Z_OK) return std::nullopt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[16384];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;
  }
  bool complete = rc == Z_STREAM_END && z.avail_in == 0;
  inflateEnd(&z);
  if (!complete) return std::nullopt;
  return out;
}

inline std::optional<std::string> unbrotli(std::string_view data) {
  BrotliDecoderState* s = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
  size_t avail_in = data.size();
  const uint8_t* next_in = reinterpret_cast<const uint8_t*>(data.data());
  std::string out;
  BrotliDecoderResult r = BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
  while (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
    uint8_t buf[16384];
    size_t avail_out = sizeof(buf);
    uint8_t* next_out = buf;
    r = BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, nullptr);
    out.append(reinterpret_cast<char*>(buf), sizeof(buf) - avail_out);
  }
  BrotliDecoderDestroyInstance(s);
  if (r != BROTLI_DECODER_RESULT_SUCCESS || avail_in != 0) return std::nullopt;
  return out;
}

inline std::optional<std::string> unzstd(std::string_view data) {
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  std::string out;
  size_t rc = 1;
  while (in.pos < in.size || rc != 0) {
    char buf[16384];
    ZSTD_outBuffer o{buf, sizeof(buf), 0};
    size_t before = in.pos;
    rc = ZSTD_decompressStream(d, &o, &in);
    if (ZSTD_isError(rc)) break;
    out.append(buf, o.pos);
    if (o.pos == 0 && in.pos == before) break;  // no progress: truncated
  }
  ZSTD_freeDCtx(d);
  if (ZSTD_isError(rc) || rc != 0 || in.pos != in.size) return std::nullopt;
  return out;
}

// Text that compresses, but not to nothing: lines with a counter.
inline std::string compressibleText(size_t size) {
  std::string s;
  for (size_t i = 0; s.size() < size; ++i) {
    s += "<p>line " + std::to_string(i) + " of a page that repeats itself</p>\n";
  }
  s.resize(size);
  return s;
}

}  // namespace scalws::worker::testing
