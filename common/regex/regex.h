// A compiled regular expression (PCRE2, Perl syntax) for routes: compiled once when the
// config loads, with PCRE2's JIT when the platform has it, then matched by every loop.
//
// Patterns are UTF-8 (UTF mode, a "." is one character); subjects may hold any bytes
// (PCRE2_MATCH_INVALID_UTF: invalid UTF-8 never matches a character, nor fails the match).
// A match is bounded (match and depth limits), so a pattern that backtracks badly on some
// subject costs a bounded amount and counts as no match.
//
// Thread-safe: a Regex is immutable once compiled; match() keeps its scratch per thread.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

#include "common/status.h"

namespace scalws::common {

// What a match captured: groups[0] is the whole match, groups[1..9] the first nine
// groups (empty when a group took no part). Views into the subject.
struct RegexCaptures {
  static constexpr size_t kMax = 10;
  std::array<std::string_view, kMax> groups;
};

class Regex {
 public:
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // A pattern that does not compile is refused with PCRE2's message and the offset in the
  // pattern where it went wrong.
  static Result<std::shared_ptr<const Regex>> compile(std::string_view pattern);

  // The capturing groups the pattern has ($1..$N may be used with N up to this, and 9).
  uint32_t captureCount() const { return capture_count_; }
  bool jitCompiled() const { return jit_; }

  bool matches(std::string_view subject) const;
  // Fills `captures` when it matches.
  bool match(std::string_view subject, RegexCaptures& captures) const;

 private:
  explicit Regex(void* code) : code_(code) {}
  int run(std::string_view subject) const;

  void* code_;  // pcre2_code_8
  uint32_t capture_count_ = 0;
  bool jit_ = false;
};

}  // namespace scalws::common
