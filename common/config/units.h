// Sizes ("64k", "10m", "1g", plain integers are bytes) and durations ("30s", "500ms",
// "2m", "1h", "1d"; plain integers are seconds) as written in a config.
//
// The accepted forms, decided once so every key reads the same way:
// - A size is decimal digits with an optional suffix k, m or g (either case; powers of
//   1024, as nginx reads them): "0", "512", "64k", "10M", "1g". No fractions ("1.5m" is
//   refused: a fraction of a byte count invites rounding surprises), no spaces, no sign,
//   no "kb"/"KiB" spellings.
// - A duration is decimal digits with an optional suffix ms, s, m, h or d, lower-case
//   only ("M" is nginx's month, so upper-case is refused rather than guessed): "0",
//   "500ms", "30s", "2m", "1h", "1d"; no suffix means seconds. No fractions, no compound
//   forms ("1m30s"), no spaces, no sign.
// - A value past 2^64-1 (bytes or milliseconds) is refused, never wrapped.
// The error messages say what was found and what is expected, without a position; the
// loader prefixes file:line:col and the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"

namespace scalws::common::config {

Result<uint64_t> parseSize(std::string_view text);
Result<uint64_t> parseDurationMs(std::string_view text);
// A count from 1 to `max` in decimal digits (a command-line option's value): nullopt for
// anything else (0, a sign, blanks, a suffix, too large).
std::optional<uint64_t> parseCount(std::string_view text, uint64_t max);

}  // namespace scalws::common::config
