#include "worker/handlers/static/file_response.h"

#include <array>
#include <cstdio>

#include "worker/handlers/static/byte_range.h"
#include "worker/handlers/static/conditional_request.h"
#include "worker/http/error_response.h"

namespace scalws::worker {
namespace {

constexpr size_t kMaxHeaders = 10;

class HeaderList {
 public:
  void add(std::string_view name, std::string_view value) {
    if (count_ < fields_.size()) fields_[count_++] = HeaderField{name, value};
  }
  std::span<const HeaderField> span() const { return {fields_.data(), count_}; }

 private:
  std::array<HeaderField, kMaxHeaders> fields_;
  size_t count_ = 0;
};

// The headers every successful or 304 answer about this file carries (RFC 9110 §15.4.5:
// a 304 repeats ETag, Cache-Control and Vary).
void addValidatorHeaders(HeaderList& h, const OpenFile& file, const FileResponseOptions& o) {
  h.add("ETag", file.etag());
  h.add("Last-Modified", file.lastModified());
  if (!o.cache_control.empty()) h.add("Cache-Control", o.cache_control);
  if (o.vary_accept_encoding) h.add("Vary", "Accept-Encoding");
}

void sendSlice(ResponseWriter& writer, OpenFile& file, uint64_t first, uint64_t length) {
  if (file.hasBytes()) {
    // Small files: copied next to the head, so both leave in one writev.
    writer.sendBody(file.bytes().substr(first, length), BodyLifetime::kCopy);
  } else {
    writer.sendFile(FileSlice{file.fd(), first, length, &file});
  }
}

void sendMultipart(Request& request, ResponseWriter& writer, OpenFile& file,
                   const FileResponseOptions& options, const RangeRequest& ranges) {
  char boundary[24];
  int blen = std::snprintf(boundary, sizeof(boundary), "scalws%016llx",
                           static_cast<unsigned long long>(request.id));
  std::string_view b(boundary, static_cast<size_t>(blen));
  std::string_view type = file.contentType();

  // Render every part head first: the Content-Length must be known before the head.
  std::array<std::string_view, RangeRequest::kMaxRanges> parts;
  // Delimiter, two header lines and three numbers of at most 20 digits, with room to spare.
  size_t per_part = b.size() + type.size() + 128;
  char* buf = request.arena->allocate(ranges.count * per_part);
  uint64_t total = 0;
  for (size_t i = 0; i < ranges.count; ++i) {
    const ByteRange& r = ranges.ranges[i];
    int n = std::snprintf(
        buf, per_part,
        "\r\n--%.*s\r\nContent-Type: %.*s\r\nContent-Range: bytes %llu-%llu/%llu\r\n\r\n",
        static_cast<int>(b.size()), b.data(), static_cast<int>(type.size()), type.data(),
        static_cast<unsigned long long>(r.first), static_cast<unsigned long long>(r.last()),
        static_cast<unsigned long long>(file.size()));
    parts[i] = std::string_view(buf, static_cast<size_t>(n));
    buf += n;
    total += parts[i].size() + r.length;
  }
  char closing[40];
  int clen = std::snprintf(closing, sizeof(closing), "\r\n--%.*s--\r\n", static_cast<int>(b.size()),
                           b.data());
  total += static_cast<uint64_t>(clen);

  char content_type[64];
  int tlen =
      std::snprintf(content_type, sizeof(content_type), "multipart/byteranges; boundary=%.*s",
                    static_cast<int>(b.size()), b.data());
  HeaderList h;
  h.add("Content-Type", std::string_view(content_type, static_cast<size_t>(tlen)));
  addValidatorHeaders(h, file, options);
  h.add("Accept-Ranges", "bytes");
  ResponseHead head;
  head.status = 206;
  head.headers = h.span();
  head.content_length = total;
  writer.sendHead(head);
  if (!request.isHead()) {
    for (size_t i = 0; i < ranges.count; ++i) {
      writer.sendBody(parts[i], BodyLifetime::kCopy);
      sendSlice(writer, file, ranges.ranges[i].first, ranges.ranges[i].length);
    }
    writer.sendBody(std::string_view(closing, static_cast<size_t>(clen)), BodyLifetime::kCopy);
  }
  writer.finish();
}

}  // namespace

void sendFileResponse(Request& request, ResponseWriter& writer, OpenFile& file,
                      const FileResponseOptions& options) noexcept {
  Validators validators{file.etag(), file.mtimeSeconds()};
  switch (evaluatePreconditions(request, validators)) {
    case Precondition::kFailed:
      sendError(request, writer, 412);
      return;
    case Precondition::kNotModified: {
      HeaderList h;
      addValidatorHeaders(h, file, options);
      ResponseHead head;
      head.status = 304;
      head.headers = h.span();
      writer.sendHead(head);
      writer.finish();
      return;
    }
    case Precondition::kProceed:
      break;
  }

  // RFC 9110 §14.2: Range is defined for GET only; HEAD gets the whole file's headers.
  RangeRequest ranges;
  if (request.method == Method::kGet) {
    std::string_view range = request.header("range");
    if (!range.empty() && ifRangeHolds(request.header("if-range"), validators)) {
      ranges = parseRange(range, file.size());
    }
  }
  if (ranges.kind == RangeRequest::Kind::kUnsatisfiable) {
    char value[40];
    int n = std::snprintf(value, sizeof(value), "bytes */%llu",
                          static_cast<unsigned long long>(file.size()));
    const HeaderField extra[] = {
        {"Content-Range", std::string_view(value, static_cast<size_t>(n))}};
    sendError(request, writer, 416, extra);
    return;
  }
  // The parts of a multipart answer carry no Content-Encoding of their own, so a
  // precompressed variant is sent whole rather than as an ambiguous multipart.
  if (ranges.kind == RangeRequest::Kind::kRanges && ranges.count > 1 &&
      !options.content_encoding.empty()) {
    ranges = RangeRequest{};
  }
  if (ranges.kind == RangeRequest::Kind::kRanges && ranges.count > 1) {
    sendMultipart(request, writer, file, options, ranges);
    return;
  }

  HeaderList h;
  h.add("Content-Type", file.contentType());
  addValidatorHeaders(h, file, options);
  if (!options.content_encoding.empty()) h.add("Content-Encoding", options.content_encoding);
  h.add("Accept-Ranges", "bytes");
  uint64_t first = 0;
  uint64_t length = file.size();
  char content_range[72];
  ResponseHead head;
  head.status = 200;
  if (ranges.kind == RangeRequest::Kind::kRanges) {
    first = ranges.ranges[0].first;
    length = ranges.ranges[0].length;
    int n = std::snprintf(content_range, sizeof(content_range), "bytes %llu-%llu/%llu",
                          static_cast<unsigned long long>(first),
                          static_cast<unsigned long long>(ranges.ranges[0].last()),
                          static_cast<unsigned long long>(file.size()));
    h.add("Content-Range", std::string_view(content_range, static_cast<size_t>(n)));
    head.status = 206;
  }
  head.headers = h.span();
  head.content_length = length;
  writer.sendHead(head);
  if (!request.isHead() && length > 0) sendSlice(writer, file, first, length);
  writer.finish();
}

}  // namespace scalws::worker
