#include "worker/handlers/static/mime_types.h"

#include <array>

namespace scalws::worker {
namespace {

struct BuiltIn {
  std::string_view extension;
  std::string_view type;
};

// The types a website is made of; anything else is a `types` entry away.
constexpr BuiltIn kBuiltIn[] = {
    {"html", "text/html"},
    {"htm", "text/html"},
    {"xhtml", "application/xhtml+xml"},
    {"css", "text/css"},
    {"js", "text/javascript"},  // RFC 9239
    {"mjs", "text/javascript"},
    {"json", "application/json"},
    {"map", "application/json"},
    {"jsonld", "application/ld+json"},
    {"webmanifest", "application/manifest+json"},
    {"xml", "application/xml"},
    {"rss", "application/rss+xml"},
    {"atom", "application/atom+xml"},
    {"txt", "text/plain"},
    {"md", "text/markdown"},
    {"csv", "text/csv"},
    {"ics", "text/calendar"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"webp", "image/webp"},
    {"avif", "image/avif"},
    {"jxl", "image/jxl"},
    {"ico", "image/x-icon"},
    {"bmp", "image/bmp"},
    {"tif", "image/tiff"},
    {"tiff", "image/tiff"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"ttf", "font/ttf"},
    {"otf", "font/otf"},
    {"eot", "application/vnd.ms-fontobject"},
    {"pdf", "application/pdf"},
    {"wasm", "application/wasm"},
    {"zip", "application/zip"},
    {"gz", "application/gzip"},
    {"tar", "application/x-tar"},
    {"mp4", "video/mp4"},
    {"m4v", "video/mp4"},
    {"webm", "video/webm"},
    {"ogv", "video/ogg"},
    {"mov", "video/quicktime"},
    {"mp3", "audio/mpeg"},
    {"m4a", "audio/mp4"},
    {"ogg", "audio/ogg"},
    {"opus", "audio/ogg"},
    {"oga", "audio/ogg"},
    {"wav", "audio/wav"},
    {"flac", "audio/flac"},
    {"vtt", "text/vtt"},
};

constexpr std::string_view kTextLike[] = {
    "text/",
    "application/javascript",
    "application/json",
    "application/xml",
    "image/svg+xml",
    "application/manifest+json",
    "application/ld+json",
    "application/xhtml+xml",
    "application/rss+xml",
    "application/atom+xml",
};

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

uint64_t fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string MimeTypes::render(std::string_view media_type) {
  std::string out(media_type);
  if (media_type.find(';') != std::string_view::npos) return out;
  for (std::string_view prefix : kTextLike) {
    bool is_prefix = prefix.back() == '/';
    if ((is_prefix && media_type.starts_with(prefix)) || media_type == prefix) {
      out += "; charset=utf-8";
      break;
    }
  }
  return out;
}

MimeTypes::MimeTypes(const std::map<std::string, std::string>& overrides) {
  types_.reserve(std::size(kBuiltIn) + overrides.size());
  for (const BuiltIn& b : kBuiltIn) types_[std::string(b.extension)] = render(b.type);
  uint64_t h = 14695981039346656037ull;
  for (const auto& [extension, type] : overrides) {
    std::string key;
    for (char c : extension) key += lower(c);
    types_[key] = render(type);
    h = fnv1a(fnv1a(h, key), "\n");
    h = fnv1a(fnv1a(h, type), "\n");
  }
  fingerprint_ = overrides.empty() ? 0 : (h == 0 ? 1 : h);
}

std::string_view MimeTypes::lookup(std::string_view path) const {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == name.size()) return kDefault;
  std::string_view ext = name.substr(dot + 1);
  // Extensions are short; longer ones are no type we know.
  std::array<char, 24> buf;
  if (ext.size() > buf.size()) return kDefault;
  for (size_t i = 0; i < ext.size(); ++i) buf[i] = lower(ext[i]);
  auto it = types_.find(std::string_view(buf.data(), ext.size()));
  return it == types_.end() ? std::string_view(kDefault) : std::string_view(it->second);
}

}  // namespace scalws::worker
