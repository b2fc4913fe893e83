// One streaming compressor (gzip over zlib, brotli over libbrotli, zstd over libzstd) as
// the response filter drives it: input in pieces, output handed on as it appears, then the
// end of the stream.
//
// Memory is bounded per compressor by its window (Params::window_log, chosen from the
// response's length when known) plus a 16 KiB output buffer; nothing grows with the
// response. A compressor is reused for the next response of the same parameters
// (CompressorPool) when its library can reset it: zlib and zstd can, brotli 1.0 cannot.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "common/config/response_config.h"

namespace scalws::worker::compress {

using common::config::CompressEncoding;

class CompressedSink {
 public:
  virtual void onCompressed(std::string_view bytes) noexcept = 0;

 protected:
  ~CompressedSink() = default;
};

class Compressor {
 public:
  struct Params {
    CompressEncoding encoding = CompressEncoding::kGzip;
    int level = 6;
    // log2 of the window: gzip 9..15, brotli 10..24, zstd 10..
    int window_log = 15;
    bool operator==(const Params&) const = default;
  };

  // The parameters for a response of `length` bytes (nullopt: unknown) at `level`: the
  // window is the smallest power of two that holds the whole response, within the
  // library's bounds and a cap that keeps memory per response bounded (gzip 32 KiB, brotli
  // and zstd 512 KiB).
  static Params paramsFor(CompressEncoding encoding, int level, std::optional<uint64_t> length);
  // Null when the library refuses (out of memory).
  static std::unique_ptr<Compressor> create(const Params& params);

  virtual ~Compressor() = default;
  const Params& params() const { return params_; }

  // Compresses `input` (`end`: and ends the stream), handing every full output buffer to
  // `sink`, and what is left in it at the end of the call. False on a library error (the
  // response cannot be completed). The sink may be called zero or more times.
  virtual bool write(std::string_view input, bool end, CompressedSink& sink) noexcept = 0;
  // Ready for a new stream with the same parameters; false when the library cannot (the
  // compressor is then dropped, not pooled).
  virtual bool reset() noexcept = 0;

 protected:
  explicit Compressor(const Params& params) : params_(params) {}
  static constexpr size_t kOutputSize = 16 * 1024;

 private:
  Params params_;
};

}  // namespace scalws::worker::compress
