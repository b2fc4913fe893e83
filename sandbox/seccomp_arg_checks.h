// Argument checks of seccomp rules (ArgCheck), as the allow-list and the deny-list write
// them.
#pragma once

#include <cstdint>

#include "sandbox/seccomp_allow_list.h"

namespace scalws::sandbox {

// int arguments: only the low 32 bits are defined in the register, so compare those.
constexpr ArgCheck eq32(uint8_t arg, uint64_t value) {
  return {ArgCheck::Op::kMaskedEq, arg, 0xffffffffULL, value};
}
constexpr ArgCheck eq64(uint8_t arg, uint64_t value) {
  return {ArgCheck::Op::kMaskedEq, arg, ~0ULL, value};
}
constexpr ArgCheck masked(uint8_t arg, uint64_t mask, uint64_t value) {
  return {ArgCheck::Op::kMaskedEq, arg, mask, value};
}
// Every bit of `bits` set.
constexpr ArgCheck hasBits(uint8_t arg, uint64_t bits) {
  return {ArgCheck::Op::kMaskedEq, arg, bits, bits};
}
constexpr ArgCheck selfPid(uint8_t arg) {
  return {ArgCheck::Op::kEqSelfPid, arg, 0xffffffffULL, 0};
}

}  // namespace scalws::sandbox
