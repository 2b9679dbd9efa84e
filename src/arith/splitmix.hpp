// splitmix64: a tiny, well-mixed 64-bit generator step, the same in host and device code, so
// benchmark data can be made from (seed, index) on whichever side fills it.
#pragma once

#include <cstdint>

#include "runtime/host_device.hpp"

namespace gemmkit {

// The state's increment per step (2^64 / golden ratio, odd).
inline constexpr std::uint64_t kSplitmixGamma = 0x9e3779b97f4a7c15ull;

// The output of a splitmix64 generator whose state is `state` before the step.
GEMMKIT_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t state) {
  std::uint64_t z = state + kSplitmixGamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// One step of a stateful splitmix64 generator: its output, and `state` moved on.
GEMMKIT_HOST_DEVICE inline std::uint64_t splitmix64_next(std::uint64_t& state) {
  const std::uint64_t z = splitmix64(state);
  state += kSplitmixGamma;
  return z;
}

}  // namespace gemmkit
