#include "worker/handlers/cache/stored_entry.h"

#include <cstring>

#include "worker/handlers/cache/hash64.h"

namespace scalws::worker::cache {
namespace {

// Field offsets in the header.
constexpr size_t kOffMagic = 0;
constexpr size_t kOffVersion = 4;
constexpr size_t kOffHeaderSize = 6;
constexpr size_t kOffStatus = 8;
constexpr size_t kOffFlags = 10;
constexpr size_t kOffKeyLen = 12;
constexpr size_t kOffUriLen = 16;
constexpr size_t kOffVaryLen = 20;
constexpr size_t kOffHeadLen = 24;
constexpr size_t kOffBodyLen = 32;
constexpr size_t kOffResponseTime = 40;
constexpr size_t kOffInitialAge = 48;
constexpr size_t kOffLifetime = 56;
constexpr size_t kOffSwr = 64;
constexpr size_t kOffSie = 72;
constexpr size_t kOffKeyHash = 80;
constexpr size_t kOffChecksum = 88;

constexpr uint16_t kFlagMustRevalidate = 1;
constexpr uint16_t kFlagNoCache = 2;
constexpr uint16_t kKnownFlags = kFlagMustRevalidate | kFlagNoCache;

template <typename T>
void put(char* out, size_t offset, T value) {
  std::memcpy(out + offset, &value, sizeof(T));  // little-endian hosts only
}

template <typename T>
T get(const char* in, size_t offset) {
  T value;
  std::memcpy(&value, in + offset, sizeof(T));
  return value;
}

common::Status corrupt(const char* what) {
  return common::invalidArgument(std::string("stored entry: ") + what);
}

// A stored value: visible ASCII, obs-text, spaces and tabs; never CR, LF, NUL or DEL.
bool isFieldValueChar(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

// Calls visit(name, value) for each "Name: value\r\n" line of a stored head while it
// returns true; false when a line is malformed (no CRLF, no ": ", and with kCheck a name
// that is not a token or CR, LF, NUL or DEL in a value) or visit said stop.
template <bool kCheck, class Visit>
bool forEachStoredField(std::string_view head, Visit&& visit) {
  while (!head.empty()) {
    size_t end = head.find("\r\n");
    if (end == std::string_view::npos) return false;
    std::string_view line = head.substr(0, end);
    head.remove_prefix(end + 2);
    size_t colon = line.find(": ");
    if (colon == 0 || colon == std::string_view::npos) return false;
    std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 2);
    if constexpr (kCheck) {
      if (!isToken(name)) return false;
      for (char c : value) {
        if (!isFieldValueChar(static_cast<unsigned char>(c))) return false;
      }
    }
    if (!visit(name, value)) return false;
  }
  return true;
}

}  // namespace

size_t entryMetaSize(std::string_view key, std::string_view uri, std::string_view vary,
                     std::string_view head) {
  return kEntryHeaderSize + key.size() + uri.size() + vary.size() + head.size();
}

void writeEntryMeta(const EntryInfo& info, std::string_view key, std::string_view uri,
                    std::string_view vary, std::string_view head, char* out) {
  std::memset(out, 0, kEntryHeaderSize);
  put<uint32_t>(out, kOffMagic, kEntryMagic);
  put<uint16_t>(out, kOffVersion, kEntryVersion);
  put<uint16_t>(out, kOffHeaderSize, static_cast<uint16_t>(kEntryHeaderSize));
  put<uint16_t>(out, kOffStatus, info.status);
  uint16_t flags = 0;
  if (info.freshness.must_revalidate) flags |= kFlagMustRevalidate;
  if (info.freshness.no_cache) flags |= kFlagNoCache;
  put<uint16_t>(out, kOffFlags, flags);
  put<uint32_t>(out, kOffKeyLen, static_cast<uint32_t>(key.size()));
  put<uint32_t>(out, kOffUriLen, static_cast<uint32_t>(uri.size()));
  put<uint32_t>(out, kOffVaryLen, static_cast<uint32_t>(vary.size()));
  put<uint32_t>(out, kOffHeadLen, static_cast<uint32_t>(head.size()));
  put<uint64_t>(out, kOffBodyLen, info.body_len);
  put<int64_t>(out, kOffResponseTime, info.freshness.response_time_ms);
  put<uint64_t>(out, kOffInitialAge, info.freshness.corrected_initial_age_ms);
  put<uint64_t>(out, kOffLifetime, info.freshness.lifetime_ms);
  put<uint64_t>(out, kOffSwr, info.freshness.stale_while_revalidate_ms);
  put<uint64_t>(out, kOffSie, info.freshness.stale_if_error_ms);
  put<uint64_t>(out, kOffKeyHash, info.key_hash);
  put<uint64_t>(out, kOffChecksum, info.checksum);
  char* p = out + kEntryHeaderSize;
  for (std::string_view section : {key, uri, vary, head}) {
    if (!section.empty()) std::memcpy(p, section.data(), section.size());
    p += section.size();
  }
}

uint64_t entryChecksum(std::string_view meta, std::span<const std::string_view> body_parts) {
  Hash64 h(kEntryMagic);
  if (meta.size() >= kEntryHeaderSize) {
    char header[kEntryHeaderSize];
    std::memcpy(header, meta.data(), kEntryHeaderSize);
    put<uint64_t>(header, kOffChecksum, 0);
    h.update(header, kEntryHeaderSize);
    h.update(meta.substr(kEntryHeaderSize));
  } else {
    h.update(meta);
  }
  for (std::string_view part : body_parts) h.update(part);
  uint64_t sum = h.digest();
  return sum == 0 ? 1 : sum;  // 0 means "not computed"
}

void setEntryChecksum(char* meta, uint64_t checksum) {
  put<uint64_t>(meta, kOffChecksum, checksum);
}

void setEntryBodyLength(char* meta, uint64_t body_len) {
  put<uint64_t>(meta, kOffBodyLen, body_len);
}

common::Result<EntryView> parseEntryMeta(std::string_view bytes) {
  if (bytes.size() < kEntryHeaderSize) return corrupt("shorter than its header");
  const char* in = bytes.data();
  if (get<uint32_t>(in, kOffMagic) != kEntryMagic) return corrupt("bad magic");
  if (get<uint16_t>(in, kOffVersion) != kEntryVersion) return corrupt("unknown version");
  if (get<uint16_t>(in, kOffHeaderSize) != kEntryHeaderSize) return corrupt("bad header size");
  for (size_t i = kOffChecksum + 8; i < kEntryHeaderSize; ++i) {
    if (in[i] != 0) return corrupt("reserved bytes set");
  }
  EntryView view;
  EntryInfo& info = view.info;
  info.status = get<uint16_t>(in, kOffStatus);
  if (info.status < 200 || info.status > 599) return corrupt("bad status");
  uint16_t flags = get<uint16_t>(in, kOffFlags);
  if ((flags & ~kKnownFlags) != 0) return corrupt("unknown flags");
  info.freshness.must_revalidate = (flags & kFlagMustRevalidate) != 0;
  info.freshness.no_cache = (flags & kFlagNoCache) != 0;
  uint32_t key_len = get<uint32_t>(in, kOffKeyLen);
  uint32_t uri_len = get<uint32_t>(in, kOffUriLen);
  uint32_t vary_len = get<uint32_t>(in, kOffVaryLen);
  uint32_t head_len = get<uint32_t>(in, kOffHeadLen);
  if (key_len == 0 || key_len > kMaxKeyBytes) return corrupt("bad key length");
  if (uri_len == 0 || uri_len > kMaxKeyBytes) return corrupt("bad uri length");
  if (vary_len > kMaxVaryBytes) return corrupt("bad vary length");
  if (head_len > kMaxHeadBytes) return corrupt("bad head length");
  info.body_len = get<uint64_t>(in, kOffBodyLen);
  info.freshness.response_time_ms = get<int64_t>(in, kOffResponseTime);
  info.freshness.corrected_initial_age_ms = get<uint64_t>(in, kOffInitialAge);
  info.freshness.lifetime_ms = get<uint64_t>(in, kOffLifetime);
  info.freshness.stale_while_revalidate_ms = get<uint64_t>(in, kOffSwr);
  info.freshness.stale_if_error_ms = get<uint64_t>(in, kOffSie);
  // Ages and lifetimes beyond what delta-seconds can say are no honest entry's (and would
  // overflow the age arithmetic).
  constexpr uint64_t kMaxMs = uint64_t{kMaxDeltaSeconds} * 1000 * 4;
  if (info.freshness.corrected_initial_age_ms > kMaxMs || info.freshness.lifetime_ms > kMaxMs ||
      info.freshness.stale_while_revalidate_ms > kMaxMs ||
      info.freshness.stale_if_error_ms > kMaxMs || info.freshness.response_time_ms < 0 ||
      static_cast<uint64_t>(info.freshness.response_time_ms) > kMaxMs * 1000) {
    return corrupt("bad times");
  }
  info.key_hash = get<uint64_t>(in, kOffKeyHash);
  info.checksum = get<uint64_t>(in, kOffChecksum);
  size_t meta = kEntryHeaderSize + size_t{key_len} + uri_len + vary_len + head_len;
  if (bytes.size() < meta) return corrupt("shorter than its sections");
  size_t at = kEntryHeaderSize;
  view.key = bytes.substr(at, key_len);
  at += key_len;
  view.uri = bytes.substr(at, uri_len);
  at += uri_len;
  view.vary = bytes.substr(at, vary_len);
  at += vary_len;
  view.head = bytes.substr(at, head_len);
  view.meta_size = meta;
  size_t count = 0;
  bool well_formed = forEachStoredField<true>(
      view.head, [&](std::string_view, std::string_view) { return ++count <= kMaxStoredFields; });
  if (!well_formed) return corrupt("malformed head");
  for (char c : view.vary) {
    if (c == '\r' || c == '\0') return corrupt("malformed vary");
  }
  return view;
}

EntryView rebaseEntryView(const EntryView& view, const char* from, const char* to) {
  auto moved = [&](std::string_view part) {
    return part.data() == nullptr ? part : std::string_view(to + (part.data() - from), part.size());
  };
  EntryView out = view;
  out.key = moved(view.key);
  out.uri = moved(view.uri);
  out.vary = moved(view.vary);
  out.head = moved(view.head);
  out.body = moved(view.body);
  return out;
}

common::Result<EntryView> parseEntry(std::string_view bytes, bool verify_checksum) {
  common::Result<EntryView> parsed = parseEntryMeta(bytes);
  if (!parsed.ok()) return parsed.status();
  EntryView view = std::move(parsed).value();
  if (bytes.size() - view.meta_size != view.info.body_len) {
    return corrupt(bytes.size() - view.meta_size < view.info.body_len ? "truncated body"
                                                                      : "bytes after the body");
  }
  view.body = bytes.substr(view.meta_size);
  if (verify_checksum) {
    std::string_view parts[] = {view.body};
    if (view.info.checksum == 0) return corrupt("no checksum");
    if (entryChecksum(bytes.substr(0, view.meta_size), parts) != view.info.checksum) {
      return corrupt("checksum mismatch");
    }
  }
  return view;
}

namespace {

template <bool kCheck>
bool splitHead(std::string_view head, std::span<HeaderField> out, size_t& count) {
  count = 0;
  return forEachStoredField<kCheck>(head, [&](std::string_view name, std::string_view value) {
    if (count == out.size()) return false;
    out[count++] = HeaderField{name, value};
    return true;
  });
}

}  // namespace

bool splitStoredHead(std::string_view head, std::span<HeaderField> out, size_t& count) {
  return splitHead<true>(head, out, count);
}

bool splitParsedHead(std::string_view head, std::span<HeaderField> out, size_t& count) {
  return splitHead<false>(head, out, count);
}

size_t storedFieldCount(std::string_view head) {
  size_t count = 0;
  for (size_t at = head.find('\n'); at != std::string_view::npos; at = head.find('\n', at + 1)) {
    ++count;
  }
  return count;
}

void appendStoredField(std::string& head, std::string_view name, std::string_view value) {
  head += name;
  head += ": ";
  head += value;
  head += "\r\n";
}

}  // namespace scalws::worker::cache
