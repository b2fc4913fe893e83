#include "worker/response/compress/compress_rules.h"

#include "worker/response/compress/coding_choice.h"

namespace scalws::worker::compress {
namespace {

bool statusCompressible(uint16_t status) {
  if (status < 200) return false;
  return status != 204 && status != 205 && status != 206 && status != 304;
}

}  // namespace

CompressRules::CompressRules(const common::config::CompressConfig& config)
    : encodings_(config.encodings), min_size_(config.min_size) {
  for (const std::string& type : config.types) {
    if (type.ends_with("/*")) {
      wildcard_.push_back(type.substr(0, type.size() - 2));
    } else {
      exact_.push_back(type);
    }
  }
  levels_[static_cast<size_t>(CompressEncoding::kBrotli)] = config.brotli_level;
  levels_[static_cast<size_t>(CompressEncoding::kZstd)] = config.zstd_level;
  levels_[static_cast<size_t>(CompressEncoding::kGzip)] = config.gzip_level;
}

int CompressRules::level(CompressEncoding encoding) const {
  return levels_[static_cast<size_t>(encoding)];
}

bool CompressRules::typeMatches(std::string_view content_type) const {
  std::string_view media = trimOws(content_type.substr(0, content_type.find(';')));
  size_t slash = media.find('/');
  if (slash == std::string_view::npos) return false;
  for (const std::string& type : exact_) {
    if (equalsIgnoreCase(media, type)) return true;
  }
  std::string_view top = media.substr(0, slash);
  for (const std::string& type : wildcard_) {
    if (equalsIgnoreCase(top, type)) return true;
  }
  return false;
}

CompressRules::Decision CompressRules::decide(const Request& request, uint16_t status,
                                              std::span<const HeaderField> headers,
                                              std::optional<uint64_t> content_length) const {
  Decision d;
  if (status == 304) {
    d.encoding = chooseEncoding(request, encodings_);
    d.varies = true;
    return d;
  }
  if (!statusCompressible(status)) return d;
  if (content_length.has_value() && *content_length < min_size_) return d;
  bool typed = false;
  for (const HeaderField& h : headers) {
    if (equalsIgnoreCase(h.name, "content-encoding") || equalsIgnoreCase(h.name, "content-range")) {
      return d;
    }
    if (equalsIgnoreCase(h.name, "cache-control") && headerListContains(h.value, "no-transform")) {
      return d;
    }
    if (equalsIgnoreCase(h.name, "content-type")) typed = typeMatches(h.value);
  }
  if (!typed) return d;
  d.varies = true;
  d.encoding = chooseEncoding(request, encodings_);
  return d;
}

}  // namespace scalws::worker::compress
