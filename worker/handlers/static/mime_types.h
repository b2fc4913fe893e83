// Content-Type by file extension for a static route: a built-in table of the common web
// types, overridden per route by `types` (extension → media type).
//
// Rendering rule, decided once: text types get "; charset=utf-8" (text/*, JavaScript,
// JSON, XML, SVG, web manifests); a `types` value that already carries parameters (a ';')
// is used verbatim; an unknown or missing extension is application/octet-stream.
// Extensions compare case-insensitively ("A.PNG" is image/png).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace scalws::worker {

class MimeTypes {
 public:
  static constexpr std::string_view kDefault = "application/octet-stream";

  // `overrides`: extension (lower-case, no dot) → media type, as the config loader stores
  // them.
  explicit MimeTypes(const std::map<std::string, std::string>& overrides = {});

  // The Content-Type value for a file name or path (the extension after the last '.' of
  // the last segment). Views stay valid as long as this object.
  std::string_view lookup(std::string_view path) const;

  // Identifies the override set (0 without overrides), so open-file cache entries that
  // store a rendered Content-Type are never shared between routes that disagree.
  uint64_t fingerprint() const { return fingerprint_; }

  // The value a bare media type renders to (charset added to text types).
  static std::string render(std::string_view media_type);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Lower-case extension → rendered value; found by string_view, without building a key.
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> types_;
  uint64_t fingerprint_ = 0;
};

}  // namespace scalws::worker
