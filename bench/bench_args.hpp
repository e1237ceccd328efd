// Small helpers shared by the benchmark drivers: command-line options
// ("--key value", "--flag"), comma-separated lists and a wall clock.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpufmm.h"

// Exits with the library's message when a gpufmm call fails.
#define CHECK(call)                                                                \
  do {                                                                             \
    gpufmm_status_t st_ = (call);                                                  \
    if (st_ != GPUFMM_SUCCESS) {                                                   \
      std::fprintf(stderr, "%s failed: %s\n", #call, gpufmm_last_error_message()); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

namespace bench {

// "a,b,c" -> {"a", "b", "c"} (an empty string gives one empty item)
inline std::vector<std::string> split(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    const size_t e = s.find(sep, b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

// The value after `key`, or `fallback`.
inline std::string option(int argc, char** argv, const char* key, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == key) return argv[i + 1];
  return fallback;
}

inline bool flag(int argc, char** argv, const char* key) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == key) return true;
  return false;
}

// Seconds on a monotonic clock.
inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The CSV file at `path` opened for appending, `header` (a line) written
// first when the file is empty; null when path is empty or cannot be
// opened. The caller writes its row and closes it.
inline FILE* csv_append(const std::string& path, const char* header) {
  if (path.empty()) return nullptr;
  FILE* f = std::fopen(path.c_str(), "a");
  if (!f) return nullptr;
  std::fseek(f, 0, SEEK_END);
  if (std::ftell(f) == 0) std::fputs(header, f);
  return f;
}

}  // namespace bench
