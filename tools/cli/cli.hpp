// The `gpufmm` command-line tool: one subcommand per area, each in its own
// file under tools/cli/, registered at start-up with GPUFMM_SUBCOMMAND.
#pragma once

#include <string>
#include <vector>

namespace gpufmm_cli {

struct Subcommand {
  const char* name;
  const char* summary;  // one line for `gpufmm help`
  int (*run)(const std::vector<std::string>& args);  // args after the subcommand name
};

bool register_subcommand(const Subcommand& s);

// Small argument helpers: "--key value" and "--flag".
bool has_flag(const std::vector<std::string>& args, const std::string& flag);
std::string option_value(const std::vector<std::string>& args, const std::string& key,
                         const std::string& fallback);
// Rejects arguments not in `known` (flags and keys); prints and returns false.
bool check_known(const std::vector<std::string>& args, const std::vector<std::string>& keys,
                 const std::vector<std::string>& flags);

}  // namespace gpufmm_cli

#define GPUFMM_SUBCOMMAND(ident, name, summary, fn) \
  static const bool ident##_registered = ::gpufmm_cli::register_subcommand({name, summary, fn})
