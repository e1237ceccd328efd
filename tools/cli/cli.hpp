// The `gpufmm` command-line tool: one subcommand per area, each in its own
// file under tools/cli/, registered at start-up with GPUFMM_SUBCOMMAND.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/distributions.hpp"

namespace gpufmm_cli {

struct Subcommand {
  const char* name;
  const char* summary;  // one line for `gpufmm help`
  int (*run)(const std::vector<std::string>& args);  // args after the subcommand name
  // The subcommand's usage text, to `out`: `gpufmm <name> --help` (or -h, or
  // `gpufmm help <name>`) prints it to stdout and exits 0 without running
  // the subcommand; the subcommand prints it to stderr on a bad argument.
  void (*usage)(FILE* out);
};

bool register_subcommand(const Subcommand& s);

// Small argument helpers: "--key value" and "--flag".
bool has_flag(const std::vector<std::string>& args, const std::string& flag);
std::string option_value(const std::vector<std::string>& args, const std::string& key,
                         const std::string& fallback);
// Rejects arguments not in `known` (flags and keys); prints and returns false.
bool check_known(const std::vector<std::string>& args, const std::vector<std::string>& keys,
                 const std::vector<std::string>& flags);
// Numbers of option values; false if s is not one. Integers may be written
// 1e6 (or 2.5e5).
bool parse_int(const std::string& s, long long& v);
bool parse_double(const std::string& s, double& v);
// The device of --cpu / --gpu (GPU 0) / neither (GPUFMM_DEVICE_DEFAULT: the
// first GPU if any, else the CPU); false if both are given.
bool parse_device(const std::vector<std::string>& args, int& device);

// The progress line of a long run: "gpufmm <command>: <stage> ... (seconds
// since the start)" on stderr, rewritten in place on a terminal (nothing
// otherwise); cleared by stage(nullptr) and at destruction.
class Progress {
 public:
  explicit Progress(const char* command);
  ~Progress() { stage(nullptr); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  void stage(const char* what);

 private:
  const char* command_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

// The points and charges of a run: n sources and, m > 0, m separate targets
// from one distribution (the targets' seed is seed + 1000), charges uniform
// in (0, 1) or, signed_charges, in (-1, 1) (seed + 7).
struct Problem {
  std::vector<double> sources, targets, charges;
  int64_t ntrg = 0;  // m, or n at the sources
  // Where the sums are evaluated: the targets, or the sources.
  const std::vector<double>& eval_points() const { return targets.empty() ? sources : targets; }
};
Problem make_problem(gpufmm_test::Dist dist, int64_t n, int64_t m, uint64_t seed, bool signed_charges);

// K targets sampled evenly from n points (3 x n doubles): their indices and
// their coordinates (3 x K), where a command checks against the direct sum.
void sample_points(const std::vector<double>& points, int64_t n, int64_t k, std::vector<int64_t>& idx,
                   std::vector<double>& coords);
// Relative L2 error (papers/000 eq. 36, papers/001 eq. 16) of
// a[width * idx[i] + k] against ref[width * i + k].
double rel_l2(const std::vector<double>& a, const std::vector<int64_t>& idx, const std::vector<double>& ref,
              int width);

}  // namespace gpufmm_cli

#define GPUFMM_SUBCOMMAND(ident, name, summary, fn, usage_fn) \
  static const bool ident##_registered = ::gpufmm_cli::register_subcommand({name, summary, fn, usage_fn})
