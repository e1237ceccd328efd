// Fresh seeds for the tests that draw random inputs: GPUFMM_TEST_SEED=<seed>
// replays a run.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace gpufmm_test {

// GPUFMM_TEST_SEED if set, else a fresh seed, printed ("<what>: seed N")
// when `what` is given. Callers keep it in a static: one seed per run.
inline uint64_t fresh_test_seed(const char* what) {
  if (const char* e = std::getenv("GPUFMM_TEST_SEED")) return uint64_t(std::strtoull(e, nullptr, 10));
  std::random_device rd;
  const uint64_t s = (uint64_t(rd()) << 32) ^ rd();
  if (what != nullptr) std::printf("%s: seed %llu\n", what, static_cast<unsigned long long>(s));
  return s;
}

}  // namespace gpufmm_test
