#include "common/regex/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace scalws::common {
namespace {

// Paths are at most a request line long; these bound the work of a pathological pattern
// on one (the default match limit is ten million steps).
constexpr uint32_t kMatchLimit = 100'000;
constexpr uint32_t kDepthLimit = 10'000;

// One match data and context per thread: matching allocates nothing.
struct ThreadScratch {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  ThreadScratch() {
    data = pcre2_match_data_create(RegexCaptures::kMax, nullptr);
    context = pcre2_match_context_create(nullptr);
    if (context != nullptr) {
      pcre2_set_match_limit(context, kMatchLimit);
      pcre2_set_depth_limit(context, kDepthLimit);
    }
  }
  ~ThreadScratch() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
  }
};

ThreadScratch& scratch() {
  thread_local ThreadScratch s;
  return s;
}

}  // namespace

Regex::~Regex() {
  pcre2_code_free(static_cast<pcre2_code*>(code_));
}

Result<std::shared_ptr<const Regex>> Regex::compile(std::string_view pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return invalidArgument(std::string(reinterpret_cast<const char*>(message)) + " (at offset " +
                           std::to_string(offset) + " of the pattern)");
  }
  std::shared_ptr<Regex> regex(new Regex(code));
  pcre2_pattern_info(code, PCRE2_INFO_CAPTURECOUNT, &regex->capture_count_);
  // Without a JIT (a platform or a build without one) the interpreter matches the same.
  regex->jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  return std::shared_ptr<const Regex>(std::move(regex));
}

int Regex::run(std::string_view subject) const {
  ThreadScratch& s = scratch();
  if (s.data == nullptr) return PCRE2_ERROR_NOMEMORY;
  return pcre2_match(static_cast<const pcre2_code*>(code_),
                     reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0, 0, s.data,
                     s.context);
}

bool Regex::matches(std::string_view subject) const {
  // 0: a match with more groups than the match data holds, still a match.
  return run(subject) >= 0;
}

bool Regex::match(std::string_view subject, RegexCaptures& captures) const {
  int rc = run(subject);
  if (rc < 0) return false;
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch().data);
  size_t pairs = rc == 0 ? RegexCaptures::kMax : static_cast<size_t>(rc);
  for (size_t i = 0; i < RegexCaptures::kMax; ++i) {
    PCRE2_SIZE start = ovector[2 * i];
    PCRE2_SIZE end = ovector[2 * i + 1];
    if (i >= pairs || start == PCRE2_UNSET || end < start || end > subject.size()) {
      captures.groups[i] = {};
    } else {
      captures.groups[i] = subject.substr(start, end - start);
    }
  }
  return true;
}

}  // namespace scalws::common
