#include "worker/response/error_pages.h"

#include <uv.h>

#include <array>
#include <cstring>

#include "common/log.h"
#include "worker/http/error_response.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker {
namespace {

void appendScopeBytes(std::string& out, uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(v));
}

}  // namespace

common::Result<std::unique_ptr<ErrorRoot>> ErrorRoot::open(const std::string& path) {
  common::Result<DocRoot> dir = DocRoot::open(path, common::config::FollowSymlinks::kBeneath);
  if (!dir.ok()) return dir.status();
  return std::unique_ptr<ErrorRoot>(new ErrorRoot(std::move(dir).value()));
}

ErrorRoot::ErrorRoot(DocRoot dir) : dir_(std::move(dir)) {
  // The key a static route on the same directory with the built-in types uses: the two
  // share cache entries, which mean the same thing.
  appendScopeBytes(scope_, dir_.dev());
  appendScopeBytes(scope_, dir_.ino());
  appendScopeBytes(scope_, dir_.resolveFlags());
  appendScopeBytes(scope_, mime_.fingerprint());
}

ErrorPages::ErrorPages(std::vector<Page> route_pages, std::vector<Page> site_pages)
    : route_pages_(std::move(route_pages)), site_pages_(std::move(site_pages)) {}

const ErrorPages::Page* ErrorPages::findIn(std::span<const Page> pages, uint16_t status) {
  for (const Page& p : pages) {
    if (p.status == status) return &p;
  }
  for (const Page& p : pages) {
    if (p.status == 0 && p.status_class == status / 100) return &p;
  }
  return nullptr;
}

const ErrorPages::Page* ErrorPages::find(uint16_t status) const {
  if (const Page* p = findIn(route_pages_, status)) return p;
  return findIn(site_pages_, status);
}

bool ErrorPages::send(Request& request, ResponseWriter& writer, uint16_t status,
                      std::span<const HeaderField> extra, bool close) const noexcept {
  if (request.loop == nullptr) return false;
  WorkerLoop& loop = *request.loop;
  return send(request, writer, status, extra, close, loop.local<OpenFileCache>(),
              uv_now(loop.uv()));
}

bool ErrorPages::send(Request& request, ResponseWriter& writer, uint16_t status,
                      std::span<const HeaderField> extra, bool close, OpenFileCache& cache,
                      uint64_t now_ms) const noexcept {
  const Page* page = find(status);
  if (page == nullptr) return false;
  FileLookup lookup;
  lookup.root = &page->root->dir();
  lookup.scope = page->root->scope();
  lookup.path = page->path;
  lookup.policy.mode = common::config::OpenFileCacheConfig::Mode::kCheck;
  lookup.now_ms = now_ms;
  FileResult found = cache.acquire(lookup);
  if (found.file == nullptr) {
    LOG_DEBUG("error page \"%s\" beneath %s for %u: %s", page->path.c_str(),
              page->root->dir().path().c_str(), status, strerror(found.error));
    return false;
  }
  OpenFile& file = *found.file;
  if (file.contentType().empty()) file.setContentType(page->root->mime().lookup(page->path));

  std::array<HeaderField, 8> fields;
  writer.sendHead(errorHead(status, file.contentType(), extra, file.size(), close, fields));
  if (!request.isHead() && file.size() > 0) {
    if (file.hasBytes()) {
      writer.sendBody(file.bytes(), BodyLifetime::kCopy);
    } else {
      writer.sendFile(FileSlice{file.fd(), 0, file.size(), &file});
    }
  }
  writer.finish();
  file.release();
  return true;
}

}  // namespace scalws::worker
