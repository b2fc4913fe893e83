// Decides which PHP script a request path runs, and refuses everything else: only an
// existing regular `.php` file beneath the root is ever named to PHP (so PHP's own path
// guessing, cgi.fix_pathinfo, never gets the chance to run /uploads/x.jpg).
//
// The path is split at its first segment that ends in ".php" (SCRIPT_NAME, then PATH_INFO);
// a path ending in "/" tries the index; a missing script falls back to the front
// controller when one is configured. Existence is checked with openat2(root_fd,
// RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) on a root directory opened when the config
// snapshot was built, so symlinks and ".." cannot leave the root, in the kernel. A script
// found is remembered for kFoundValidMs per event loop (nginx's open_file_cache_valid does
// the same for 60 s by default): a script removed meanwhile reaches PHP-FPM, which answers
// 404; a missing one is looked up every time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"
#include "worker/http/arena.h"

namespace scalws::worker::fastcgi {

struct ScriptMatch {
  std::string_view script_name;  // "/blog/index.php": from the path, the index or the config
  std::string_view path_info;    // what follows the script in the path; empty when none
  bool front_controller = false;
};

class ScriptResolver {
 public:
  static constexpr uint64_t kFoundValidMs = 1000;

  // Opens `root` (O_PATH | O_DIRECTORY); call before the sandbox.
  static common::Result<ScriptResolver> open(const std::string& root, std::string index,
                                             std::string front_controller);

  // `path` is decoded and normalized (starts with "/", no dot segments). False: no script
  // (answer 404). Index paths are built in `arena`.
  bool resolve(std::string_view path, Arena& arena, ScriptMatch& out) const;

  const std::string& root() const { return root_; }

 private:
  ScriptResolver() = default;
  bool isScript(std::string_view script_name) const;

  uint64_t id_ = 0;  // tells this resolver's remembered scripts from others' (reloads)
  common::UniqueFd root_fd_;
  std::string root_;
  std::string index_;
  std::string front_controller_;  // empty: none
};

}  // namespace scalws::worker::fastcgi
