#include "worker/handlers/static/static_handler.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "worker/handlers/static/file_response.h"
#include "worker/handlers/static/static_path.h"
#include "worker/http/error_response.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {
namespace {

void appendBytes(std::string& out, uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

// `a` + `b` in the request's arena.
std::string_view concat(Arena& arena, std::string_view a, std::string_view b) {
  char* p = arena.allocate(a.size() + b.size() + 1);
  std::memcpy(p, a.data(), a.size());
  std::memcpy(p + a.size(), b.data(), b.size());
  p[a.size() + b.size()] = '\0';
  return std::string_view(p, a.size() + b.size());
}

}  // namespace

common::Result<std::unique_ptr<StaticHandler>> StaticHandler::create(
    const common::config::StaticAction& action, const common::config::SourceLocation& where) {
  common::Result<DocRoot> root = DocRoot::open(action.root, action.follow_symlinks);
  if (!root.ok()) return common::invalidArgument(where.toString() + ": " + root.status().message());
  return std::unique_ptr<StaticHandler>(new StaticHandler(action, std::move(root).value()));
}

StaticHandler::StaticHandler(const common::config::StaticAction& action, DocRoot root)
    : root_(std::move(root)),
      mime_(action.types),
      index_(action.index),
      policy_(action.open_file_cache),
      allow_dotfiles_(action.allow_dotfiles) {
  for (const std::string& coding : action.precompressed) {
    precompressed_.push_back(coding == "br" ? ContentCoding::kBrotli : ContentCoding::kGzip);
  }
  if (action.max_age.has_value()) cache_control_ = "max-age=" + std::to_string(*action.max_age);
  // Same root directory, same symlink rule and same types: entries mean the same thing,
  // also across a reload (a new snapshot finds the previous one's entries warm).
  appendBytes(scope_, root_.dev());
  appendBytes(scope_, root_.ino());
  appendBytes(scope_, root_.resolveFlags());
  appendBytes(scope_, mime_.fingerprint());
}

void StaticHandler::handle(Request& request, ResponseWriter& writer) noexcept {
  WorkerLoop& loop = *request.loop;
  serve(request, writer, loop.local<OpenFileCache>(), uv_now(loop.uv()), loop.turn());
}

FileLookup StaticHandler::lookup(std::string_view path, uint64_t now_ms, uint64_t turn) const {
  FileLookup l;
  l.root = &root_;
  l.scope = scope_;
  l.path = path;
  l.policy = policy_;
  l.now_ms = now_ms;
  l.turn = turn;
  return l;
}

void StaticHandler::serve(Request& request, ResponseWriter& writer, OpenFileCache& cache,
                          uint64_t now_ms, uint64_t turn) const noexcept {
  if (request.method != Method::kGet && request.method != Method::kHead) {
    const HeaderField allow[] = {{"Allow", "GET, HEAD"}};
    sendError(request, writer, 405, allow);
    return;
  }
  StaticPath path = checkStaticPath(request.path, allow_dotfiles_);
  if (path.verdict == StaticPathVerdict::kInvalid) {
    sendError(request, writer, 400);
    return;
  }
  if (path.verdict == StaticPathVerdict::kDotfile) {
    sendError(request, writer, 404);
    return;
  }

  OpenFile* file = nullptr;
  std::string_view file_path;
  if (path.directory) {
    for (const std::string& index : index_) {
      std::string_view candidate = concat(*request.arena, path.relative, index);
      FileResult r = cache.acquire(lookup(candidate, now_ms, turn));
      if (r.file != nullptr) {
        file = r.file;
        file_path = candidate;
        break;
      }
      // A missing index (or one that is a directory or a FIFO) lets the next one try.
      if (r.error != ENOENT && r.error != EISDIR && r.error != ENODEV) {
        answerOpenError(request, writer, r.error);
        return;
      }
    }
    if (file == nullptr) {
      answerDirectoryWithoutIndex(request, writer, path.relative);
      return;
    }
  } else {
    FileResult r = cache.acquire(lookup(path.relative, now_ms, turn));
    if (r.file == nullptr) {
      if (r.error == EISDIR) {
        std::string_view location =
            directoryRedirectLocation(request.path, request.query, *request.arena);
        const HeaderField extra[] = {{"Location", location}};
        sendError(request, writer, 301, extra);
        return;
      }
      answerOpenError(request, writer, r.error);
      return;
    }
    file = r.file;
    file_path = path.relative;
  }

  FileResponseOptions options;
  options.cache_control = cache_control_;
  std::string_view content_type;
  if (!precompressed_.empty()) {
    options.vary_accept_encoding = true;
    CodingPreference preference = preferredCodings(request, precompressed_);
    for (size_t i = 0; i < preference.count; ++i) {
      FileLookup l = lookup(file_path, now_ms, turn);
      l.suffix = variantSuffix(preference.order[i]);
      l.variant = true;
      l.remember_missing = true;
      FileResult v = cache.acquire(l);
      if (v.file == nullptr) continue;  // absent or unusable: the next coding, or identity
      // The variant has the original's type (app.js.br is JavaScript, encoded).
      content_type = mime_.lookup(file_path);
      file->release();
      file = v.file;
      options.content_encoding = contentCodingName(preference.order[i]);
      break;
    }
  }
  if (file->contentType().empty()) {
    file->setContentType(content_type.empty() ? mime_.lookup(file_path) : content_type);
  }
  sendFileResponse(request, writer, *file, options);
  file->release();
}

void StaticHandler::answerDirectoryWithoutIndex(Request& request, ResponseWriter& writer,
                                                std::string_view relative) const noexcept {
  std::string_view dir = concat(*request.arena, relative.empty() ? "." : relative, "");
  int fd = root_.openFile(dir.data());
  if (fd < 0) {
    answerOpenError(request, writer, errno);
    return;
  }
  FileIdentity id;
  bool is_dir = DocRoot::statFd(fd, id) && id.isDirectory();
  ::close(fd);
  // An existing directory without an index: forbidden, there are no listings.
  sendError(request, writer, is_dir ? 403 : 404);
}

void StaticHandler::answerOpenError(Request& request, ResponseWriter& writer,
                                    int error) const noexcept {
  switch (error) {
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ENODEV:
    case EISDIR:
      sendError(request, writer, 404);
      return;
    case EXDEV:  // RESOLVE_BENEATH: the path (a symlink, a race) would leave the root
    case ELOOP:  // RESOLVE_NO_SYMLINKS / RESOLVE_NO_MAGICLINKS, or a symlink loop
      LOG_DEBUG("static: \"%.*s\" refused by openat2 beneath %s: %s",
                static_cast<int>(request.path.size()), request.path.data(), root_.path().c_str(),
                strerror(error));
      sendError(request, writer, 403);
      return;
    case EACCES:
    case EPERM:
      sendError(request, writer, 403);
      return;
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      LOG_WARN("static: cannot open a file beneath %s: %s", root_.path().c_str(), strerror(error));
      sendError(request, writer, 503);
      return;
    default:
      LOG_ERROR("static: cannot open \"%.*s\" beneath %s: %s",
                static_cast<int>(request.path.size()), request.path.data(), root_.path().c_str(),
                strerror(error));
      sendError(request, writer, 500);
      return;
  }
}

}  // namespace scalws::worker
