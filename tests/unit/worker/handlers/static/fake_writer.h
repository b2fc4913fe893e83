// A ResponseWriter that records what a handler sent, for handler tests without sockets.
// File slices are read back with pread, and their owners retained until the writer goes,
// as the real connection does until the bytes left.
#pragma once

#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "worker/http/response_writer.h"

namespace scalws::worker::testing {

class FakeWriter final : public ResponseWriter {
 public:
  ~FakeWriter() override {
    for (RefCounted* owner : owners_) owner->release();
  }

  void sendHead(const ResponseHead& head) noexcept override {
    ++heads;
    status = head.status;
    content_length = head.content_length;
    headers.clear();
    for (const HeaderField& h : head.headers) {
      headers.emplace_back(std::string(h.name), std::string(h.value));
    }
  }
  void sendBody(std::string_view data, BodyLifetime) noexcept override { body.append(data); }
  void sendFile(const FileSlice& file) noexcept override {
    ++file_slices;
    if (file.owner != nullptr) {
      file.owner->retain();
      owners_.push_back(file.owner);
    }
    std::string chunk(file.length, '\0');
    ssize_t n = ::pread(file.fd, chunk.data(), chunk.size(), static_cast<off_t>(file.offset));
    chunk.resize(n > 0 ? static_cast<size_t>(n) : 0);
    body += chunk;
  }
  void finish() noexcept override { ++finished; }
  size_t queuedBytes() const noexcept override { return 0; }
  void notifyWhenWritable(WritableObserver*) noexcept override {}
  void setInFlight(InFlight*) noexcept override {}

  std::optional<std::string> header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (equalsIgnoreCase(n, name)) return v;
    }
    return std::nullopt;
  }

  int heads = 0;
  int finished = 0;
  int file_slices = 0;
  uint16_t status = 0;
  std::optional<uint64_t> content_length;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

 private:
  std::vector<RefCounted*> owners_;
};

}  // namespace scalws::worker::testing
