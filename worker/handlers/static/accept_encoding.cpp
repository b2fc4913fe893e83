#include "worker/handlers/static/accept_encoding.h"

#include "worker/http/header_field.h"

namespace scalws::worker {
namespace {

// q in thousandths; -1: not mentioned.
struct Mentioned {
  int br = -1;
  int gzip = -1;
  int star = -1;
};

// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ).
int parseQ(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return 0;
  int whole = v[0] - '0';
  if (v.size() == 1) return whole * 1000;
  if (v[1] != '.' || v.size() > 5) return 0;
  int frac = 0;
  int digits = 0;
  for (char c : v.substr(2)) {
    if (c < '0' || c > '9') return 0;
    frac = frac * 10 + (c - '0');
    ++digits;
  }
  for (; digits < 3; ++digits) frac *= 10;
  if (whole == 1 && frac != 0) return 0;
  return whole * 1000 + frac;
}

void scanLine(std::string_view list, Mentioned& m) {
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
        q = parseQ(param.substr(2));
      }
      params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
    }
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
