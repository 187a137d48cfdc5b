// One vocabulary across the commands: the old spellings of renamed flags (accepted, hidden from
// --help, with a one-line notice on stderr), and did-you-mean suggestions for a misspelled flag
// or subcommand. The audit behind the renames is docs/cli.md.
#ifndef CLOUDFIT_CLI_VOCABULARY_H_
#define CLOUDFIT_CLI_VOCABULARY_H_

#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace cloudfit::cli {

struct DeprecatedFlag {
  std::string command;   // subcommand path, "catalog import"
  std::string old_name;  // "--min-gpus"
  std::string new_name;  // "--total-gpus-min"
  // The old spelling is also a current flag without a value (monitor's --csv FILE became
  // --samples-csv FILE, and --csv now prints CSV): it is the old one only when a value follows.
  bool only_with_value = false;
};

// Every renamed flag, by command.
const std::vector<DeprecatedFlag>& DeprecatedFlags();

// Replaces deprecated flag spellings in `args` (argv without the program name; "--x=v" too) by
// the current ones, writing "cloudfit: note: --old is deprecated; use --new" to `notices` once
// per flag. Stops at "--", after which the arguments belong to the command being run.
std::vector<std::string> RewriteDeprecatedFlags(const CLI::App& app,
                                                const std::vector<std::string>& args,
                                                std::ostream& notices);

// After a parse error: "unknown option '--gpus-mn' for 'instances'; did you mean '--gpus-min'?"
// for the first unknown flag, or the same for a subcommand; "" when every word is known.
std::string ExplainUnknownWord(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace cloudfit::cli

#endif  // CLOUDFIT_CLI_VOCABULARY_H_
