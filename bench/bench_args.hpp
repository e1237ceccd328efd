// Small helpers shared by the benchmark drivers: command-line options
// ("--key value", "--flag"), comma-separated lists and a wall clock.
#pragma once

#include <chrono>
#include <string>
#include <vector>

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

}  // namespace bench
