// `gpufmm` - the command-line tool. Subcommands register themselves
// (tools/cli/cli.hpp); `gpufmm help` lists them.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"

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

}  // namespace gpufmm_cli

static void usage(FILE* out) {
  std::fprintf(out, "usage: gpufmm <command> [options]\n\ncommands:\n");
  auto subs = gpufmm_cli::registry();
  std::sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) { return std::strcmp(a.name, b.name) < 0; });
  for (const auto& s : subs) std::fprintf(out, "  %-8s %s\n", s.name, s.summary);
  std::fprintf(out, "  %-8s %s\n", "help", "this text");
}

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    usage(stdout);
    return 0;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& s : gpufmm_cli::registry())
    if (cmd == s.name) return s.run(args);
  std::fprintf(stderr, "gpufmm: unknown command '%s'\n\n", cmd.c_str());
  usage(stderr);
  return 2;
}
