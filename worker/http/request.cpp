#include "worker/http/request.h"

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

void Request::resetForReuse() {
  Arena* keep_arena = arena;
  const PeerInfo* keep_peer = peer;
  WorkerLoop* keep_loop = loop;
  *this = Request();
  arena = keep_arena;
  peer = keep_peer;
  loop = keep_loop;
}

}  // namespace scalws::worker
