#include "worker/handlers/static/accept_encoding.h"

#include "worker/http/header_field.h"
#include "worker/http/weighted_tokens.h"

namespace scalws::worker {
namespace {

// q in thousandths; -1: not mentioned.
struct Mentioned {
  int br = -1;
  int gzip = -1;
  int star = -1;
};

void scanLine(std::string_view list, Mentioned& m) {
  WeightedTokens tokens(list);
  std::string_view coding;
  int q = 0;
  while (tokens.next(coding, q)) {
    int* slot = nullptr;
    if (equalsIgnoreCase(coding, "br")) {
      slot = &m.br;
    } else if (equalsIgnoreCase(coding, "gzip") || equalsIgnoreCase(coding, "x-gzip")) {
      slot = &m.gzip;
    } else if (coding == "*") {
      slot = &m.star;
    }
    if (slot != nullptr && *slot < 0) *slot = q;  // the first mention counts
  }
}

CodingPreference rank(const Mentioned& m, std::span<const ContentCoding> configured) {
  CodingPreference out;
  int qs[2] = {0, 0};
  for (ContentCoding c : configured) {
    if (out.count == out.order.size()) break;
    int explicit_q = c == ContentCoding::kBrotli ? m.br : m.gzip;
    int q = explicit_q >= 0 ? explicit_q : (m.star >= 0 ? m.star : 0);
    if (q <= 0) continue;
    // Insertion keeping higher q first, configured order among equals.
    size_t at = out.count;
    while (at > 0 && qs[at - 1] < q) {
      out.order[at] = out.order[at - 1];
      qs[at] = qs[at - 1];
      --at;
    }
    out.order[at] = c;
    qs[at] = q;
    ++out.count;
  }
  return out;
}

}  // namespace

std::string_view contentCodingName(ContentCoding coding) {
  return coding == ContentCoding::kBrotli ? "br" : "gzip";
}

std::string_view variantSuffix(ContentCoding coding) {
  return coding == ContentCoding::kBrotli ? ".br" : ".gz";
}

CodingPreference preferredCodings(const Request& request,
                                  std::span<const ContentCoding> configured) {
  Mentioned m;
  for (const HeaderField& h : request.headers) {
    if (equalsIgnoreCase(h.name, "accept-encoding")) scanLine(h.value, m);
  }
  return rank(m, configured);
}

CodingPreference preferredCodings(std::string_view accept_encoding,
                                  std::span<const ContentCoding> configured) {
  Mentioned m;
  scanLine(accept_encoding, m);
  return rank(m, configured);
}

}  // namespace scalws::worker
