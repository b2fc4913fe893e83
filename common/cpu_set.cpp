#include "common/cpu_set.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <iterator>

namespace scalws::common {

CpuSet::CpuSet(std::initializer_list<uint32_t> ids) : CpuSet(std::vector<uint32_t>(ids)) {}

CpuSet::CpuSet(std::vector<uint32_t> ids) : ids_(std::move(ids)) {
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
}

CpuSet CpuSet::range(uint32_t first, uint32_t last) {
  CpuSet set;
  if (last < first) return set;
  for (uint32_t cpu = first;; ++cpu) {
    set.ids_.push_back(cpu);
    if (cpu == last) break;  // a `cpu <= last` loop never ends when last is UINT32_MAX
  }
  return set;
}

bool CpuSet::contains(uint32_t cpu) const {
  return std::binary_search(ids_.begin(), ids_.end(), cpu);
}

void CpuSet::add(uint32_t cpu) {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), cpu);
  if (it == ids_.end() || *it != cpu) ids_.insert(it, cpu);
}

void CpuSet::remove(uint32_t cpu) {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), cpu);
  if (it != ids_.end() && *it == cpu) ids_.erase(it);
}

CpuSet CpuSet::minus(const CpuSet& other) const {
  CpuSet out;
  std::set_difference(ids_.begin(), ids_.end(), other.ids_.begin(), other.ids_.end(),
                      std::back_inserter(out.ids_));
  return out;
}

bool CpuSet::isSubsetOf(const CpuSet& other) const {
  return std::includes(other.ids_.begin(), other.ids_.end(), ids_.begin(), ids_.end());
}

std::string CpuSet::toString() const {
  std::string out;
  for (size_t i = 0; i < ids_.size();) {
    size_t j = i;
    while (j + 1 < ids_.size() && ids_[j + 1] == ids_[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids_[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(ids_[j]);
    }
    i = j + 1;
  }
  return out;
}

namespace {

bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && isBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && isBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Digits only: from_chars would accept a leading '-' for signed types, and we want
// "+1" and "0x1" refused too.
Result<uint32_t> parseCpuId(std::string_view digits, std::string_view item) {
  if (digits.empty() ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return invalidArgument("bad CPU list item '" + std::string(item) +
                           "': expected a CPU number or a range like 2-5");
  }
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || value >= CpuSet::kMaxCpus) {
    return invalidArgument("bad CPU list item '" + std::string(item) + "': CPU numbers go up to " +
                           std::to_string(CpuSet::kMaxCpus - 1));
  }
  return static_cast<uint32_t>(value);
}

}  // namespace

Result<CpuSet> parseCpuList(std::string_view text) {
  text = trim(text);
  std::vector<uint32_t> ids;
  if (text.empty()) return CpuSet();
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    if (item.empty()) return invalidArgument("bad CPU list: empty item between commas");
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      Result<uint32_t> cpu = parseCpuId(item, item);
      if (!cpu.ok()) return cpu.status();
      ids.push_back(*cpu);
    } else {
      Result<uint32_t> first = parseCpuId(trim(item.substr(0, dash)), item);
      if (!first.ok()) return first.status();
      Result<uint32_t> last = parseCpuId(trim(item.substr(dash + 1)), item);
      if (!last.ok()) return last.status();
      if (*last < *first) {
        return invalidArgument("bad CPU list item '" + std::string(item) +
                               "': a range goes from low to high");
      }
      for (uint32_t cpu = *first; cpu <= *last; ++cpu) ids.push_back(cpu);
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return CpuSet(std::move(ids));
}

Result<CpuSet> currentAffinity() {
  // Grow the mask until the kernel accepts it: hosts may have more CPUs than CPU_SETSIZE.
  for (size_t ncpus = CPU_SETSIZE; ncpus <= CpuSet::kMaxCpus * 4; ncpus *= 2) {
    cpu_set_t* mask = CPU_ALLOC(ncpus);
    if (mask == nullptr) return errnoStatus(ENOMEM, "CPU_ALLOC");
    size_t bytes = CPU_ALLOC_SIZE(ncpus);
    CPU_ZERO_S(bytes, mask);
    if (sched_getaffinity(0, bytes, mask) != 0) {
      int err = errno;
      CPU_FREE(mask);
      if (err == EINVAL) continue;
      return errnoStatus(err, "sched_getaffinity");
    }
    std::vector<uint32_t> ids;
    for (size_t cpu = 0; cpu < ncpus && cpu < CpuSet::kMaxCpus; ++cpu) {
      if (CPU_ISSET_S(cpu, bytes, mask)) ids.push_back(static_cast<uint32_t>(cpu));
    }
    CPU_FREE(mask);
    return CpuSet(std::move(ids));
  }
  return internalError("sched_getaffinity: no mask size was accepted");
}

}  // namespace scalws::common
