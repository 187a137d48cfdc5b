// README that runs: every `cloudfit ...` command in README's sh blocks is run against the built
// binary, in order, from a copy of the repository's layout (examples/ and ../shared), and must
// exit 0 with some output. A block whose first line is "# needs: ..." names what it needs that
// a test machine lacks (GPUs, Docker, a cluster, root) and is not run.
#include <filesystem>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "test_support.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;

struct Command {
  int line = 0;
  std::string text;
};

std::vector<Command> ReadmeCommands(const std::string& readme, int* skipped_blocks) {
  std::vector<Command> commands;
  std::istringstream in(readme);
  std::string line;
  int number = 0;
  bool in_block = false, first_line = false, skip = false;
  std::string pending;
  int pending_line = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!in_block) {
      if (line == "```sh") in_block = first_line = true, skip = false;
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      in_block = false;
      continue;
    }
    if (first_line && line.rfind("# needs:", 0) == 0) {
      skip = true;
      ++*skipped_blocks;
    }
    first_line = false;
    if (skip) continue;
    std::string trimmed = std::regex_replace(line, std::regex(R"(^\s+|\s+$)"), "");
    if (pending.empty() && (trimmed.empty() || trimmed[0] == '#')) continue;
    if (pending.empty()) pending_line = number;
    bool continues = !trimmed.empty() && trimmed.back() == '\\';
    if (!pending.empty()) pending += ' ';
    pending += continues ? std::regex_replace(trimmed.substr(0, trimmed.size() - 1), std::regex(R"(\s+$)"), "")
                         : trimmed;
    if (continues) continue;
    // "scripts/install-deps.sh && scripts/build.sh && build/cloudfit ...": the cloudfit parts.
    size_t start = 0;
    for (;;) {
      size_t amp = pending.find("&&", start);
      std::string part = std::regex_replace(pending.substr(start, amp == std::string::npos ? std::string::npos : amp - start),
                                            std::regex(R"(^\s+|\s+$)"), "");
      if (part.rfind("cloudfit ", 0) == 0 || part.rfind("build/cloudfit ", 0) == 0) {
        commands.push_back({pending_line, part});
      }
      if (amp == std::string::npos) break;
      start = amp + 2;
    }
    pending.clear();
  }
  return commands;
}

TEST(ReadmeTest, EveryCommandRunsAndPrintsSomething) {
  std::string readme = testing::ReadWholeFile(testing::SourcePath("README.md"));
  ASSERT_FALSE(readme.empty());
  int skipped_blocks = 0;
  std::vector<Command> commands = ReadmeCommands(readme, &skipped_blocks);
  ASSERT_GE(commands.size(), 30u);

  // The repository's layout as the commands expect it: examples/ here, shared/ beside it, and
  // `cloudfit` on PATH (README: export PATH=$PWD/build:$PATH).
  testing::TempDir dir;
  fs::path root = fs::path(dir.path()) / "repo";
  fs::create_directories(root / "build");
  fs::create_symlink(testing::SourcePath("examples"), root / "examples");
  fs::create_symlink(CLOUDFIT_BINARY, root / "build" / "cloudfit");
  std::string shared = testing::SharedDir();
  if (!shared.empty()) fs::create_symlink(shared, fs::path(dir.path()) / "shared");

  int ran = 0, without_shared = 0;
  for (const Command& c : commands) {
    if (shared.empty() && c.text.find("../shared") != std::string::npos) {
      ++without_shared;
      continue;
    }
    std::string script = "PATH=" + (root / "build").string() + ":$PATH; " + c.text;
    testing::ProgramRun run = testing::RunProgram("/bin/sh", root.string(), "-c '" +
        std::regex_replace(script, std::regex("'"), "'\\''") + "'");
    std::string output = run.out + run.err;
    std::smatch redirect;
    if (std::regex_search(c.text, redirect, std::regex(R"(>\s*(\S+)\s*$)"))) {
      output += testing::ReadWholeFile((root / redirect[1].str()).string());
    }
    EXPECT_EQ(run.exit_code, 0) << "README.md:" << c.line << ": " << c.text << "\n" << run.err;
    EXPECT_FALSE(output.empty()) << "README.md:" << c.line << ": " << c.text << " printed nothing";
    ++ran;
  }
  std::cout << ran << " README commands ran; " << without_shared << " need ../shared (absent); "
            << skipped_blocks << " blocks marked '# needs:' not run\n";
}

TEST(ReadmeTest, ReaderFindsCommandsAcrossContinuationsAndSetupLines) {
  int skipped = 0;
  std::vector<Command> c = ReadmeCommands(
      "text\n```sh\n# comment\nscripts/build.sh && build/cloudfit gpus\ncloudfit recommend \\\n"
      "    --kind lora\n```\n```sh\n# needs: GPUs\ncloudfit poc\n```\n```\ncloudfit not-sh\n```\n",
      &skipped);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].text, "build/cloudfit gpus");
  EXPECT_EQ(c[1].text, "cloudfit recommend --kind lora");
  EXPECT_EQ(c[1].line, 5);
  EXPECT_EQ(skipped, 1);
}

}  // namespace
}  // namespace cloudfit
