// cloudfit: which cloud instance to rent for a job, how long it takes, what it costs, and why.
// This file holds the table of subcommands; each subcommand lives in its own cmd_*.cc file.
#include <cstdio>
#include <exception>
#include <iostream>

#include <algorithm>

#include "cli/cli_common.h"
#include "cli/vocabulary.h"
#include "util/allocator.h"
#include "util/strings.h"

namespace {

constexpr const char* kVersion = "0.1.0";

int Run(int argc, char** argv) {
  using namespace cloudfit::cli;
  cloudfit::KeepFreedMemory();
  CLI::App app{"cloudfit: which cloud instance to rent for a job, how long it takes, what it "
               "costs, and why.",
               "cloudfit"};
  app.set_version_flag("--version", kVersion);
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--catalog", global.catalog_dir,
                 "Catalog directory to use instead of the built-in one (also $CLOUDFIT_CATALOG)")
      ->check(CLI::ExistingDirectory);

  AddRecommendCommand(&app, &global);
  AddCompareCommand(&app, &global);
  AddExplainCommand(&app, &global);
  AddGpusCommand(&app, &global);
  AddInstancesCommand(&app, &global);
  AddModelsCommand(&app, &global);
  AddCatalogCommand(&app, &global);
  AddEstimateCommand(&app, &global);
  AddCalibrateCommand(&app, &global);
  AddServeCommand(&app, &global);
  AddProbeCommand(&app, &global);
  AddMonitorCommand(&app, &global);
  AddPocCommand(&app, &global);
  AddExportCommand(&app, &global);
  AddCompletionCommands(&app);

  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  args = RewriteDeprecatedFlags(app, args, std::cerr);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them reversed
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    // CLI11 names an unknown word without a suggestion, or an unknown command as a missing one.
    std::string unknown = ExplainUnknownWord(app, args);
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
