#include "worker/response/compress/compressor.h"

#include <brotli/encode.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <memory>

namespace scalws::worker::compress {
namespace {

// The smallest n with 2^n >= length, clamped to [lo, hi]; hi when unknown.
int windowFor(std::optional<uint64_t> length, int lo, int hi) {
  if (!length.has_value()) return hi;
  int n = lo;
  while (n < hi && (uint64_t{1} << n) < *length) ++n;
  return n;
}

// What an encoder wrote and the sink has not had yet: a fixed block the encoder fills, handed
// on whenever it is full and at the end of every write.
template <size_t kSize>
class OutputBlock {
 public:
  char* data() { return out_; }
  char* room() { return out_ + used_; }
  size_t used() const { return used_; }
  // The encoder's output now ends at `used`: true when that filled the block, which went to
  // `sink` (the encoder may have more to write).
  bool handOnIfFull(size_t used, CompressedSink& sink) {
    used_ = used;
    if (used_ < kSize) return false;
    sink.onCompressed(std::string_view(out_, used_));
    used_ = 0;
    return true;
  }
  void flush(CompressedSink& sink) {
    if (used_ == 0) return;
    sink.onCompressed(std::string_view(out_, used_));
    used_ = 0;
  }
  void clear() { used_ = 0; }

 private:
  size_t used_ = 0;
  char out_[kSize];
};

class GzipCompressor final : public Compressor {
 public:
  explicit GzipCompressor(const Params& params) : Compressor(params) {}
  ~GzipCompressor() override {
    if (ready_) deflateEnd(&z_);
  }

  bool init() {
    // memLevel shrinks with the window as nginx does: a small response needs neither a
    // 32 KiB window nor a 128 KiB hash.
    int mem_level = std::clamp(8 - (15 - params().window_log), 1, 8);
    // 16 + window bits: a gzip wrapper (RFC 1952) rather than zlib's.
    ready_ = deflateInit2(&z_, params().level, Z_DEFLATED, 16 + params().window_log, mem_level,
                          Z_DEFAULT_STRATEGY) == Z_OK;
    return ready_;
  }

  bool write(std::string_view input, bool end, CompressedSink& sink) noexcept override {
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    z_.avail_in = static_cast<uInt>(input.size());
    int flush = end ? Z_FINISH : Z_NO_FLUSH;
    for (;;) {
      z_.next_out = reinterpret_cast<Bytef*>(out_.room());
      z_.avail_out = static_cast<uInt>(kOutputSize - out_.used());
      int rc = deflate(&z_, flush);
      if (rc == Z_STREAM_ERROR) return false;
      if (out_.handOnIfFull(kOutputSize - z_.avail_out, sink)) continue;
      // Room left in the buffer: deflate took all the input (with Z_FINISH: and wrote the
      // end of the stream).
      break;
    }
    out_.flush(sink);
    return true;
  }

  bool reset() noexcept override {
    out_.clear();
    return ready_ && deflateReset(&z_) == Z_OK;
  }

 private:
  z_stream z_{};
  bool ready_ = false;
  OutputBlock<kOutputSize> out_;
};

class BrotliCompressor final : public Compressor {
 public:
  explicit BrotliCompressor(const Params& params) : Compressor(params) {}
  ~BrotliCompressor() override {
    if (state_ != nullptr) BrotliEncoderDestroyInstance(state_);
  }

  bool init() {
    state_ = BrotliEncoderCreateInstance(nullptr, nullptr, nullptr);
    if (state_ == nullptr) return false;
    BrotliEncoderSetParameter(state_, BROTLI_PARAM_QUALITY, static_cast<uint32_t>(params().level));
    BrotliEncoderSetParameter(state_, BROTLI_PARAM_LGWIN,
                              static_cast<uint32_t>(params().window_log));
    return true;
  }

  bool write(std::string_view input, bool end, CompressedSink& sink) noexcept override {
    size_t avail_in = input.size();
    const uint8_t* next_in = reinterpret_cast<const uint8_t*>(input.data());
    BrotliEncoderOperation op = end ? BROTLI_OPERATION_FINISH : BROTLI_OPERATION_PROCESS;
    for (;;) {
      size_t before_in = avail_in;
      size_t before_used = out_.used();
      size_t avail_out = kOutputSize - out_.used();
      uint8_t* next_out = reinterpret_cast<uint8_t*>(out_.room());
      if (!BrotliEncoderCompressStream(state_, op, &avail_in, &next_in, &avail_out, &next_out,
                                       nullptr)) {
        return false;
      }
      if (out_.handOnIfFull(kOutputSize - avail_out, sink)) continue;
      bool done = end ? BrotliEncoderIsFinished(state_) != 0
                      : avail_in == 0 && BrotliEncoderHasMoreOutput(state_) == 0;
      if (done) break;
      if (avail_in == before_in && out_.used() == before_used) return false;  // no progress
    }
    out_.flush(sink);
    return true;
  }

  // Brotli 1.0 has no way to start an encoder over.
  bool reset() noexcept override { return false; }

 private:
  BrotliEncoderState* state_ = nullptr;
  OutputBlock<kOutputSize> out_;
};

class ZstdCompressor final : public Compressor {
 public:
  explicit ZstdCompressor(const Params& params) : Compressor(params) {}
  ~ZstdCompressor() override { ZSTD_freeCCtx(cctx_); }

  bool init() {
    cctx_ = ZSTD_createCCtx();
    if (cctx_ == nullptr) return false;
    return !ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, params().level)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, params().window_log)) &&
           !ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 0));
  }

  bool write(std::string_view input, bool end, CompressedSink& sink) noexcept override {
    ZSTD_inBuffer in{input.data(), input.size(), 0};
    ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_continue;
    for (;;) {
      ZSTD_outBuffer out{out_.data(), kOutputSize, out_.used()};
      size_t rc = ZSTD_compressStream2(cctx_, &out, &in, mode);
      if (ZSTD_isError(rc)) return false;
      if (out_.handOnIfFull(out.pos, sink)) continue;
      // With room left: e_continue consumed all input; e_end returns 0 once flushed whole.
      if (end ? rc == 0 : in.pos == in.size) break;
    }
    out_.flush(sink);
    return true;
  }

  bool reset() noexcept override {
    out_.clear();
    return !ZSTD_isError(ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_only));
  }

 private:
  ZSTD_CCtx* cctx_ = nullptr;
  OutputBlock<kOutputSize> out_;
};

}  // namespace

Compressor::Params Compressor::paramsFor(CompressEncoding encoding, int level,
                                         std::optional<uint64_t> length) {
  Params p;
  p.encoding = encoding;
  p.level = level;
  switch (encoding) {
    case CompressEncoding::kGzip:
      p.window_log = windowFor(length, 9, 15);
      break;
    case CompressEncoding::kBrotli:
      p.window_log = windowFor(length, BROTLI_MIN_WINDOW_BITS, 19);
      break;
    case CompressEncoding::kZstd:
      p.window_log = windowFor(length, 10, 19);  // 10: ZSTD_WINDOWLOG_MIN
      break;
  }
  return p;
}

std::unique_ptr<Compressor> Compressor::create(const Params& params) {
  switch (params.encoding) {
    case CompressEncoding::kGzip: {
      auto c = std::make_unique<GzipCompressor>(params);
      if (!c->init()) return nullptr;
      return c;
    }
    case CompressEncoding::kBrotli: {
      auto c = std::make_unique<BrotliCompressor>(params);
      if (!c->init()) return nullptr;
      return c;
    }
    case CompressEncoding::kZstd: {
      auto c = std::make_unique<ZstdCompressor>(params);
      if (!c->init()) return nullptr;
      return c;
    }
  }
  return nullptr;
}

}  // namespace scalws::worker::compress
