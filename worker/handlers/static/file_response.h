// Answers a GET or HEAD with one opened static file: validators and preconditions (304,
// 412), Range (206, multipart/byteranges, 416) and the body — the kept bytes of a small
// cached file next to the head (one writev), anything else as FileSlices (sendfile) that
// retain the OpenFile until the bytes left.
#pragma once

#include <string_view>

#include "worker/handlers/static/open_file.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"

namespace scalws::worker {

struct FileResponseOptions {
  std::string_view content_encoding;  // "br"/"gzip" for a precompressed variant, else ""
  bool vary_accept_encoding = false;  // the route has precompressed variants
  std::string_view cache_control;     // "max-age=N", or "" for none
};

// `file` must have its Content-Type set. The caller keeps its own reference to `file`
// and may release it as soon as this returns.
void sendFileResponse(Request& request, ResponseWriter& writer, OpenFile& file,
                      const FileResponseOptions& options) noexcept;

}  // namespace scalws::worker
