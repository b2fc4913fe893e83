#include "worker/response/compress/coding_choice.h"

#include <array>

#include "worker/http/header_field.h"
#include "worker/http/weighted_tokens.h"

namespace scalws::worker::compress {
namespace {

// q in thousandths; -1: not mentioned.
struct AcceptedCodings {
  std::array<int, 3> encodings = {-1, -1, -1};  // by CompressEncoding
  int identity = -1;
  int star = -1;
};

int* slotFor(std::string_view coding, AcceptedCodings& m) {
  if (equalsIgnoreCase(coding, "br")) return &m.encodings[size_t(CompressEncoding::kBrotli)];
  if (equalsIgnoreCase(coding, "zstd")) return &m.encodings[size_t(CompressEncoding::kZstd)];
  if (equalsIgnoreCase(coding, "gzip") || equalsIgnoreCase(coding, "x-gzip")) {
    return &m.encodings[size_t(CompressEncoding::kGzip)];
  }
  if (equalsIgnoreCase(coding, "identity")) return &m.identity;
  if (coding == "*") return &m.star;
  return nullptr;
}

void scanAcceptEncoding(std::string_view list, AcceptedCodings& m) {
  WeightedTokens tokens(list);
  std::string_view coding;
  int q = 0;
  while (tokens.next(coding, q)) {
    int* slot = slotFor(coding, m);
    if (slot != nullptr && *slot < 0) *slot = q;  // the first mention counts
  }
}

std::optional<CompressEncoding> bestCoding(const AcceptedCodings& m,
                                           std::span<const CompressEncoding> configured) {
  std::optional<CompressEncoding> best;
  int best_q = 0;
  for (CompressEncoding e : configured) {
    int named = m.encodings[static_cast<size_t>(e)];
    int q = named >= 0 ? named : (m.star >= 0 ? m.star : 0);
    if (q > best_q) {
      best = e;
      best_q = q;
    }
  }
  if (best && m.identity > best_q) return std::nullopt;
  return best;
}

}  // namespace

std::string_view encodingName(CompressEncoding encoding) {
  switch (encoding) {
    case CompressEncoding::kBrotli:
      return "br";
    case CompressEncoding::kZstd:
      return "zstd";
    case CompressEncoding::kGzip:
      return "gzip";
  }
  return "gzip";
}

std::optional<CompressEncoding> chooseEncoding(const Request& request,
                                               std::span<const CompressEncoding> configured) {
  AcceptedCodings m;
  bool any = false;
  for (const HeaderField& h : request.headers) {
    if (!equalsIgnoreCase(h.name, "accept-encoding")) continue;
    scanAcceptEncoding(h.value, m);
    any = true;
  }
  return any ? bestCoding(m, configured) : std::nullopt;
}

std::optional<CompressEncoding> chooseEncoding(std::span<const std::string_view> accept_encoding,
                                               std::span<const CompressEncoding> configured) {
  AcceptedCodings m;
  for (std::string_view line : accept_encoding) scanAcceptEncoding(line, m);
  return accept_encoding.empty() ? std::nullopt : bestCoding(m, configured);
}

}  // namespace scalws::worker::compress
