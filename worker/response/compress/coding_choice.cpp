#include "worker/response/compress/coding_choice.h"

#include <array>

#include "worker/http/header_field.h"

namespace scalws::worker::compress {
namespace {

// q in thousandths; -1: not mentioned.
struct AcceptedCodings {
  std::array<int, 3> encodings = {-1, -1, -1};  // by CompressEncoding
  int identity = -1;
  int star = -1;
};

// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ); -1 when
// malformed.
int parseQValue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return -1;
  int whole = v[0] - '0';
  if (v.size() == 1) return whole * 1000;
  if (v[1] != '.' || v.size() > 5) return -1;
  int frac = 0;
  int digits = 0;
  for (char c : v.substr(2)) {
    if (c < '0' || c > '9') return -1;
    frac = frac * 10 + (c - '0');
    ++digits;
  }
  for (; digits < 3; ++digits) frac *= 10;
  if (whole == 1 && frac != 0) return -1;
  return whole * 1000 + frac;
}

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
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view element = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    size_t semi = element.find(';');
    std::string_view coding = trimOws(element.substr(0, semi));
    if (coding.empty()) continue;
    int q = 1000;
    std::string_view params =
        semi == std::string_view::npos ? std::string_view() : element.substr(semi + 1);
    while (!params.empty()) {
      size_t next = params.find(';');
      std::string_view param = trimOws(params.substr(0, next));
      if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
        q = parseQValue(trimOws(param.substr(2)));
      }
      params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
    }
    if (q < 0) q = 0;  // malformed: not acceptable
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
