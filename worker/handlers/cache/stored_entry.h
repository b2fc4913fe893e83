// The bytes of one stored response, the same in the memory tier (spread over blocks of
// the shared mapping) and in a disk file (one after the other):
//
//   EntryHeader (128 bytes, little-endian, fixed-width fields)
//   key        the primary key (cache_key.h)
//   uri        the request URI (purges and invalidations name it)
//   vary       the secondary key (vary.h); empty when the response had no Vary
//   head       the stored header fields rendered as "Name: value\r\n" lines, without the
//              status line, framing (Content-Length, Transfer-Encoding), hop-by-hop
//              fields, Date, Age or Cache-Status: what an answer from the entry copies
//              verbatim, adding its own Date, Age, Cache-Status and framing
//   body       body_len bytes
//
// Whoever reads these bytes did not write them (another worker process, a disk that may
// have torn a write), so the reader trusts nothing: every length is checked against what
// is there, the sections must add up exactly, the head must be well-formed lines of
// token ": " value without CR, LF or NUL inside, and (for a disk file) the checksum must
// match. A failure is an error to drop the entry for, never a crash.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "worker/handlers/cache/cache_policy.h"
#include "worker/http/header_field.h"

namespace scalws::worker::cache {

inline constexpr uint32_t kEntryMagic = 0x31435753;  // "SWC1"
inline constexpr uint16_t kEntryVersion = 1;
inline constexpr size_t kEntryHeaderSize = 128;
// Sanity limits of a stored entry's sections (a body is limited by cache.max_entry).
inline constexpr uint32_t kMaxKeyBytes = 16 * 1024;
inline constexpr uint32_t kMaxVaryBytes = 16 * 1024;
inline constexpr uint32_t kMaxHeadBytes = 64 * 1024;
inline constexpr size_t kMaxStoredFields = 128;

// What an entry says about itself, decoded from its header.
struct EntryInfo {
  uint16_t status = 200;
  Freshness freshness;
  uint64_t key_hash = 0;
  uint64_t body_len = 0;
  uint64_t checksum = 0;  // 0: not computed (memory entries)
};

// An entry parseEntryMeta (or parseEntry) accepted, as views into its bytes.
struct EntryView {
  EntryInfo info;
  std::string_view key;
  std::string_view uri;
  std::string_view vary;
  std::string_view head;
  std::string_view body;  // empty unless the whole entry was parsed
  // Bytes from the header to the end of the head: where the body starts.
  size_t meta_size = 0;
};

// Bytes header..head take for these sections.
size_t entryMetaSize(std::string_view key, std::string_view uri, std::string_view vary,
                     std::string_view head);
// Writes header, key, uri, vary and head into `out` (entryMetaSize bytes). The checksum
// field is written as info.checksum.
void writeEntryMeta(const EntryInfo& info, std::string_view key, std::string_view uri,
                    std::string_view vary, std::string_view head, char* out);
// The checksum of a whole entry: its bytes with the checksum field read as zero.
uint64_t entryChecksum(std::string_view meta, std::span<const std::string_view> body_parts);
// Overwrites the checksum field of a written meta.
void setEntryChecksum(char* meta, uint64_t checksum);
// Overwrites the body length of a written meta (known once a streamed body ended).
void setEntryBodyLength(char* meta, uint64_t body_len);

// Parses the header..head of an entry: `bytes` holds at least that much (and maybe the
// body, which is not looked at). Checks every section against kMax* and `bytes`.
common::Result<EntryView> parseEntryMeta(std::string_view bytes);
// `view`, parsed from bytes at `from`, viewing the same bytes copied to `to`.
EntryView rebaseEntryView(const EntryView& view, const char* from, const char* to);
// Parses a whole entry (a disk file): the sections must end exactly where `bytes` does,
// and with `verify_checksum` the checksum must be set and match.
common::Result<EntryView> parseEntry(std::string_view bytes, bool verify_checksum);

// The head's lines as fields (views into `head`). False when a line is malformed or
// there are more than out.size().
bool splitStoredHead(std::string_view head, std::span<HeaderField> out, size_t& count);
// splitStoredHead for the head of an EntryView, which parseEntryMeta found well-formed:
// the lines are split again, their characters not checked again.
bool splitParsedHead(std::string_view head, std::span<HeaderField> out, size_t& count);
// How many fields a well-formed head has (its line count), to size the span the head is
// split into.
size_t storedFieldCount(std::string_view head);
// Appends "Name: value\r\n".
void appendStoredField(std::string& head, std::string_view name, std::string_view value);

}  // namespace scalws::worker::cache
