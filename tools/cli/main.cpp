// `gpufmm` - the command-line tool. Subcommands register themselves
// (tools/cli/cli.hpp); `gpufmm help` lists them.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"
#include "gpufmm.h"

namespace gpufmm_cli {

static std::vector<Subcommand>& registry() {
  static std::vector<Subcommand> r;
  return r;
}

bool register_subcommand(const Subcommand& s) {
  registry().push_back(s);
  return true;
}

bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  return std::find(args.begin(), args.end(), flag) != args.end();
}

std::string option_value(const std::vector<std::string>& args, const std::string& key, const std::string& fallback) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == key) return args[i + 1];
  return fallback;
}

bool check_known(const std::vector<std::string>& args, const std::vector<std::string>& keys,
                 const std::vector<std::string>& flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::find(keys.begin(), keys.end(), args[i]) != keys.end()) {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "gpufmm: option %s needs a value\n", args[i].c_str());
        return false;
      }
      ++i;
    } else if (std::find(flags.begin(), flags.end(), args[i]) == flags.end()) {
      std::fprintf(stderr, "gpufmm: unknown argument '%s'\n", args[i].c_str());
      return false;
    }
  }
  return true;
}

bool parse_int(const std::string& s, long long& v) {
  char* end = nullptr;
  v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  if (*end == 'e' || *end == 'E' || *end == '.') {  // 1e6
    const double d = std::strtod(s.c_str(), &end);
    v = static_cast<long long>(d);
  }
  return *end == '\0';
}

bool parse_double(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

bool parse_device(const std::vector<std::string>& args, int& device) {
  const bool want_cpu = has_flag(args, "--cpu"), want_gpu = has_flag(args, "--gpu");
  device = want_cpu ? GPUFMM_DEVICE_CPU : (want_gpu ? 0 : GPUFMM_DEVICE_DEFAULT);
  return !(want_cpu && want_gpu);
}

Progress::Progress(const char* command)
    : command_(command), on_(isatty(fileno(stderr)) != 0), t0_(std::chrono::steady_clock::now()) {}

void Progress::stage(const char* what) {
  if (!on_) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  if (what != nullptr)
    std::fprintf(stderr, "\r\033[Kgpufmm %s: %s ... (%.1f s)", command_, what, s);
  else
    std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

Problem make_problem(gpufmm_test::Dist dist, int64_t n, int64_t m, uint64_t seed, bool signed_charges) {
  Problem p;
  p.sources = gpufmm_test::make_points(dist, n, seed);
  if (m > 0) p.targets = gpufmm_test::make_points(dist, m, seed + 1000);
  p.ntrg = m > 0 ? m : n;
  p.charges.resize(static_cast<size_t>(n));
  gpufmm_test::Rng rng(seed + 7);
  for (auto& v : p.charges) v = signed_charges ? 2 * rng.uniform_open() - 1 : rng.uniform_open();
  return p;
}

void sample_points(const std::vector<double>& points, int64_t n, int64_t k, std::vector<int64_t>& idx,
                   std::vector<double>& coords) {
  idx.resize(static_cast<size_t>(k));
  coords.resize(static_cast<size_t>(3 * k));
  for (int64_t i = 0; i < k; ++i) {
    idx[i] = i * n / k;
    for (int c = 0; c < 3; ++c) coords[3 * i + c] = points[3 * idx[i] + c];
  }
}

double rel_l2(const std::vector<double>& a, const std::vector<int64_t>& idx, const std::vector<double>& ref,
              int width) {
  double e = 0, r = 0;
  for (size_t i = 0; i < idx.size(); ++i)
    for (int k = 0; k < width; ++k) {
      const double d = a[width * idx[i] + k] - ref[width * i + k];
      e += d * d;
      r += ref[width * i + k] * ref[width * i + k];
    }
  return r > 0 ? std::sqrt(e / r) : std::sqrt(e);
}

}  // namespace gpufmm_cli

static void usage(FILE* out) {
  std::fprintf(out, "usage: gpufmm <command> [options]\n\ncommands:\n");
  auto subs = gpufmm_cli::registry();
  std::sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
  for (const auto& s : subs) std::fprintf(out, "  %-8s %s\n", s.name, s.summary);
  std::fprintf(out, "  %-8s %s\n", "help", "this text; `gpufmm help <command>`: the command's options");
  std::fprintf(out, "\n`gpufmm <command> --help` (or -h) prints the options of a command.\n");
}

static const gpufmm_cli::Subcommand* find_subcommand(const std::string& name) {
  for (const auto& s : gpufmm_cli::registry())
    if (name == s.name) return &s;
  return nullptr;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    if (cmd == "help" && args.size() == 1 && find_subcommand(args[0]) != nullptr) {
      find_subcommand(args[0])->usage(stdout);
      return 0;
    }
    usage(stdout);
    return 0;
  }
  if (const gpufmm_cli::Subcommand* s = find_subcommand(cmd)) {
    if (gpufmm_cli::has_flag(args, "--help") || gpufmm_cli::has_flag(args, "-h")) {
      s->usage(stdout);
      return 0;
    }
    return s->run(args);
  }
  std::fprintf(stderr, "gpufmm: unknown command '%s'\n\n", cmd.c_str());
  usage(stderr);
  return 2;
}
