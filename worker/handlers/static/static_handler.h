// The `static` action: files beneath a docroot, through the per-loop open-file
// cache, with validators, ranges and precompressed variants.
//
// Mapping: the request path is appended to `root` (nginx's `root`, not `alias`): with
// root = "/srv/www", "/css/a.css" is /srv/www/css/a.css whatever the route's prefix.
// Then, in order:
// - methods other than GET and HEAD → 405 (Allow: GET, HEAD);
// - our lexical checks (static_path.h): not normalized → 400, a dotfile → 404 unless
//   allow_dotfiles;
// - "/dir/" → the first index file that exists; none → 403 if the directory exists (no
//   listings), else 404; "/dir" naming a directory → 301 to "/dir/" (query kept);
// - the file is opened beneath the root (doc_root.h); a path that would leave it (EXDEV,
//   or ELOOP with follow_symlinks = "never") or is not readable → 403, a missing file,
//   FIFO or device → 404, out of fds → 503;
// - with `precompressed`, file.br / file.gz beside the file is served instead when the
//   request accepts it (accept_encoding.h), with Content-Encoding and its own validators;
//   every answer of such a route carries Vary: Accept-Encoding;
// - the answer itself: file_response.h.
//
// Ownership: built with the config snapshot (ConfigSnapshot::build), which owns it; the
// docroot fd is opened then, before any sandbox, and closed with the snapshot. Shared by
// every loop: handle() touches only the request's loop's cache.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "worker/handlers/static/accept_encoding.h"
#include "worker/handlers/static/doc_root.h"
#include "worker/handlers/static/mime_types.h"
#include "worker/handlers/static/open_file_cache.h"
#include "worker/http/handler.h"

namespace scalws::worker {

class StaticHandler final : public Handler {
 public:
  // Opens the docroot; errors are prefixed with `where` (the route's file:line:col).
  static common::Result<std::unique_ptr<StaticHandler>> create(
      const common::config::StaticAction& action, const common::config::SourceLocation& where);

  void handle(Request& request, ResponseWriter& writer) noexcept override;
  std::string_view actionName() const noexcept override { return "static"; }

  // handle() with the cache, the clock (milliseconds, monotonic) and the loop's turn
  // (FileLookup::turn) given: what handle() does with the request's loop, and what tests
  // call directly.
  void serve(Request& request, ResponseWriter& writer, OpenFileCache& cache, uint64_t now_ms,
             uint64_t turn) const noexcept;

  const DocRoot& root() const { return root_; }

 private:
  StaticHandler(const common::config::StaticAction& action, DocRoot root);

  FileLookup lookup(std::string_view path, uint64_t now_ms, uint64_t turn) const;
  void answerDirectoryWithoutIndex(Request& request, ResponseWriter& writer,
                                   std::string_view relative) const noexcept;
  void answerOpenError(Request& request, ResponseWriter& writer, int error) const noexcept;

  DocRoot root_;
  MimeTypes mime_;
  std::vector<std::string> index_;
  common::config::OpenFileCacheConfig policy_;
  std::vector<ContentCoding> precompressed_;
  std::string cache_control_;  // "max-age=N" or empty
  bool allow_dotfiles_;
  std::string scope_;  // open-file cache key prefix: root identity, symlink rule, types
};

}  // namespace scalws::worker
