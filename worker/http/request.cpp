#include "worker/http/request.h"

#include <cstring>

namespace scalws::worker {

std::string_view httpVersionName(HttpVersion version) {
  switch (version) {
    case HttpVersion::kHttp10:
      return "HTTP/1.0";
    case HttpVersion::kHttp11:
      return "HTTP/1.1";
    case HttpVersion::kHttp2:
      return "HTTP/2.0";
    case HttpVersion::kHttp3:
      return "HTTP/3.0";
  }
  return "HTTP/1.1";
}

std::string_view Request::header(std::string_view name) const {
  for (const HeaderField& h : headers) {
    if (equalsIgnoreCase(h.name, name)) return h.value;
  }
  return {};
}

std::string_view Request::originalUri() const {
  if (!target.empty() && target.front() == '/') return target;
  // An absolute-form target (RFC 9112 §3.2.2); a rewrite turns the target into origin
  // form before it changes the path, so raw_path is still the client's here.
  if (query.empty()) return raw_path;
  char* out = arena->allocate(raw_path.size() + 1 + query.size());
  std::memcpy(out, raw_path.data(), raw_path.size());
  out[raw_path.size()] = '?';
  std::memcpy(out + raw_path.size() + 1, query.data(), query.size());
  return {out, raw_path.size() + 1 + query.size()};
}

void Request::resetForReuse() {
  Arena* keep_arena = arena;
  const PeerInfo* keep_peer = socket_peer_ != nullptr ? socket_peer_ : peer;
  WorkerLoop* keep_loop = loop;
  *this = Request();
  arena = keep_arena;
  peer = keep_peer;
  loop = keep_loop;
}

}  // namespace scalws::worker
