// cloudfit: which cloud instance to rent for a job, how long it takes, what it costs, and why.
// This file holds the table of subcommands; each subcommand lives in its own cmd_*.cc file.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_common.h"
#include "cli/vocabulary.h"
#include "util/allocator.h"
#include "util/strings.h"

namespace {

constexpr const char* kVersion = "0.1.0";

// The subcommands, in the order help lists them (then completion and manpage), with the heap a
// run over the built-in catalog grows to, mapped at start in one call (util/allocator.h): 3.4 MiB
// for README's `recommend`, 1.8 MiB for `instances`, 0.5 MiB for an `estimate` (glibc's brk,
// measured with strace). The others answer from prepared data, and `catalog` and `calibrate`
// runs vary too much in size to say.
struct Command {
  const char* name;
  void (*add)(CLI::App* app, const cloudfit::cli::GlobalOptions* global);
  size_t prefault_heap_mib = 0;
};
const Command kCommands[] = {
    {"recommend", cloudfit::cli::AddRecommendCommand, 4},
    {"compare", cloudfit::cli::AddCompareCommand},
    {"explain", cloudfit::cli::AddExplainCommand},
    {"gpus", cloudfit::cli::AddGpusCommand},
    {"instances", cloudfit::cli::AddInstancesCommand, 2},
    {"models", cloudfit::cli::AddModelsCommand},
    {"catalog", cloudfit::cli::AddCatalogCommand},
    {"estimate", cloudfit::cli::AddEstimateCommand, 1},
    {"calibrate", cloudfit::cli::AddCalibrateCommand},
    {"serve", cloudfit::cli::AddServeCommand},
    {"probe", cloudfit::cli::AddProbeCommand},
    {"monitor", cloudfit::cli::AddMonitorCommand},
    {"poc", cloudfit::cli::AddPocCommand},
    {"export", cloudfit::cli::AddExportCommand},
};

// The subcommand a command line runs: its first word after the global options (--catalog DIR),
// or "" when it starts with anything else (--help, --version, nothing).
std::string_view InvokedCommand(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--catalog") {
      ++i;  // its value
      continue;
    }
    if (word.rfind("--catalog=", 0) == 0) continue;
    if (!word.empty() && word[0] == '-') return "";
    return word;
  }
  return "";
}

// Whether a command line asks for help, which lists every flag.
bool AsksForHelp(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& word) {
    return word.rfind("-h", 0) == 0 || word.rfind("--help", 0) == 0;
  });
}

// The application with its global options and subcommands. Each subcommand adds dozens of
// options, and CLI11 checks each new one against those before it: building all of them is most
// of a short command's time. When the command line names a subcommand, only that one is built;
// help, completion and mistakes get them all. With `only_named` (a command line that is parsed
// and run), the workload-field flags are limited to those the command line names.
std::unique_ptr<CLI::App> BuildApp(const std::vector<std::string>& args, bool only_named,
                                   cloudfit::cli::GlobalOptions* global) {
  using namespace cloudfit::cli;
  auto app = std::make_unique<CLI::App>(
      "cloudfit: which cloud instance to rent for a job, how long it takes, what it "
      "costs, and why.",
      "cloudfit");
  app->set_version_flag("--version", kVersion);
  app->require_subcommand(1);
  app->add_option("--catalog", global->catalog_dir,
                  "Catalog directory to use instead of the built-in one (also $CLOUDFIT_CATALOG)")
      ->check(CLI::ExistingDirectory);

  // `cloudfit --version` alone needs no subcommand (building them all was 24M instructions).
  if (args.size() == 1 && args[0] == "--version") return app;
  std::string_view invoked = InvokedCommand(args);
  bool one = std::any_of(std::begin(kCommands), std::end(kCommands),
                         [&](const Command& command) { return invoked == command.name; });
  std::vector<std::string> words;
  if (one && only_named && !AsksForHelp(args)) {
    // A deprecated spelling names the flag it becomes.
    words = args;
    for (const DeprecatedFlag& d : DeprecatedFlags()) {
      for (const std::string& word : args) {
        if (word.compare(0, d.old_name.size(), d.old_name) == 0) words.push_back(d.new_name);
      }
    }
    AddOnlyWorkloadFlagsNamedIn(&words);
  }
  for (const Command& command : kCommands) {
    if (invoked == command.name) command.add(app.get(), global);
  }
  if (!one) {
    for (const Command& command : kCommands) command.add(app.get(), global);
    AddCompletionCommands(app.get());
  }
  AddOnlyWorkloadFlagsNamedIn(nullptr);
  return app;
}

int Run(int argc, char** argv) {
  using namespace cloudfit::cli;
  cloudfit::KeepFreedMemory();
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  const std::string_view invoked = InvokedCommand(args);
  for (const Command& command : kCommands) {
    if (invoked == command.name && command.prefault_heap_mib > 0) {
      cloudfit::PrefaultHeap(command.prefault_heap_mib << 20);
    }
  }
  GlobalOptions global;
  std::unique_ptr<CLI::App> app = BuildApp(args, true, &global);
  CLI::App& parsed = *app;

  args = RewriteDeprecatedFlags(parsed, args, std::cerr);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    parsed.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return parsed.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return parsed.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return parsed.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    // CLI11 names an unknown word without a suggestion, or an unknown command as a missing one.
    // The suggestions come from every flag, so the application is built again with all of them.
    GlobalOptions unused;
    std::string unknown = ExplainUnknownWord(*BuildApp(args, false, &unused), args);
    if (!unknown.empty()) message = unknown;
    std::cerr << "cloudfit: error: " << message << "\nRun 'cloudfit --help' for usage.\n";
    return kExitError;
  } catch (const CliError& e) {
    std::cout.flush();
    std::cerr << "cloudfit: error: " << e.message << "\n";
    return kExitError;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "cloudfit: internal error: " << e.what() << "\n";
    return 3;
  }
}
