// Nothing is lost when a writer dies: every file writer is killed (SIGKILL) at random points
// while it replaces its destination, and the destination must always hold the old content or
// the new, whole; the next run cleans what the killed one left behind.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"
#include "util/file.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;
using testing::ReadWholeFile;
using testing::TempDir;

// Starts `argv` with stdout and stderr sent to /dev/null; returns the child's pid.
pid_t Spawn(const std::vector<std::string>& argv, const std::string& dir) {
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    if (chdir(dir.c_str()) != 0) _exit(127);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// Kills `pid` after `delay` (or reaps it if it ended first). True when it was killed.
bool KillAfter(pid_t pid, std::chrono::microseconds delay) {
  std::this_thread::sleep_for(delay);
  bool killed = kill(pid, SIGKILL) == 0;
  int status = 0;
  waitpid(pid, &status, 0);
  return killed && WIFSIGNALED(status);
}

// Relative path -> contents of every regular file under `dir`.
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = ReadWholeFile(e.path());
  }
  return files;
}

// Whatever killed writers left beside `path` (temporary files and directories).
std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.find(".tmp-") != std::string::npos || name.find(".old-") != std::string::npos) {
      out.push_back(name);
    }
  }
  return out;
}

std::chrono::microseconds RandomDelay(std::mt19937& random, int max_us) {
  return std::chrono::microseconds(std::uniform_int_distribution<int>(0, max_us)(random));
}

TEST(WriterKillTest, FileIsAlwaysOldOrNew) {
  TempDir dir;
  std::string path = dir.path() + "/out.bin";
  std::mt19937 random(13);
  int killed = 0;
  for (int i = 0; i < 40; ++i) {
    killed += KillAfter(Spawn({ATOMIC_WRITER_CHILD, "file", path}, dir.path()),
                        RandomDelay(random, 60000));
    if (!fs::exists(path)) continue;  // killed before the first write finished: never written
    std::string contents = ReadWholeFile(path);
    ASSERT_EQ(contents.size(), size_t{4} << 20) << "iteration " << i;
    EXPECT_TRUE(contents == std::string(contents.size(), 'A') ||
                contents == std::string(contents.size(), 'B'))
        << "iteration " << i << ": a mixture";
  }
  EXPECT_GT(killed, 30) << "the writer must have been killed mid-run";
  // The next write removes the temporary files of the killed ones.
  ASSERT_TRUE(WriteFileAtomically(path, "final").ok());
  EXPECT_EQ(ReadWholeFile(path), "final");
  EXPECT_TRUE(Leftovers(dir.path()).empty()) << Leftovers(dir.path()).front();
}

TEST(WriterKillTest, DirectoryIsAlwaysOldOrNewAndNeverMissing) {
  TempDir dir;
  std::string path = dir.path() + "/catalog";
  ASSERT_TRUE(WriteDirectoryAtomically(path, {{"models.csv", "version 9\n"}}).ok());
  std::mt19937 random(14);
  int killed = 0;
  for (int i = 0; i < 40; ++i) {
    killed += KillAfter(Spawn({ATOMIC_WRITER_CHILD, "dir", path}, dir.path()),
                        RandomDelay(random, 80000));
    ASSERT_TRUE(fs::is_directory(path)) << "iteration " << i << ": the directory went missing";
    std::map<std::string, std::string> files = Snapshot(path);
    files.erase(kCatalogMarkerFile);
    std::string tag = files["models.csv"];
    ASSERT_FALSE(tag.empty()) << "iteration " << i;
    if (tag == "version 9\n") {
      EXPECT_EQ(files.size(), 1u) << "the old tree, whole";
      continue;
    }
    ASSERT_EQ(files.size(), 3u) << "iteration " << i;
    for (const auto& [name, contents] : files) {
      EXPECT_EQ(contents.rfind(tag, 0), 0u) << name << " is from another version than models.csv";
    }
  }
  EXPECT_GT(killed, 30);
  ASSERT_TRUE(WriteDirectoryAtomically(path, {{"models.csv", "final\n"}}).ok());
  EXPECT_EQ(ReadWholeFile(path + "/models.csv"), "final\n");
  EXPECT_TRUE(Leftovers(dir.path()).empty()) << Leftovers(dir.path()).front();
}

TEST(WriterKillTest, DirectoryLeftBetweenTwoRenamesIsPutBack) {
  // Where the file system cannot exchange two directories, a writer killed between its two
  // renames leaves the old tree as <name>.old-PID and no <name>: the next run puts it back
  // before writing.
  TempDir dir;
  std::string path = dir.path() + "/catalog";
  ASSERT_TRUE(WriteDirectoryAtomically(path, {{"models.csv", "old\n"}}).ok());
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  std::string old = path + ".old-" + std::to_string(dead);
  fs::rename(path, old);
  fs::create_directories(path + ".tmp-" + std::to_string(dead) + "/instances");
  ASSERT_TRUE(WriteDirectoryAtomically(path, {{"models.csv", "new\n"}}).ok());
  EXPECT_EQ(ReadWholeFile(path + "/models.csv"), "new\n");
  EXPECT_TRUE(Leftovers(dir.path()).empty()) << Leftovers(dir.path()).front();
}

// The commands that write files, killed at random points: each goes through the shared writer.
struct CommandWriter {
  std::string name;
  std::vector<std::string> old_args;  // writes the old content first
  std::vector<std::string> new_args;  // the run that is killed
  std::string path;                   // relative to the working directory
  bool directory = false;
};

std::vector<std::string> Cloudfit(std::vector<std::string> args) {
  args.insert(args.begin(), CLOUDFIT_BINARY);
  return args;
}

void RunToEnd(const std::vector<std::string>& argv, const std::string& dir) {
  int status = 0;
  waitpid(Spawn(argv, dir), &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << argv[1];
}

TEST(WriterKillTest, CommandsLeaveOldOrNewContent) {
  const std::string fixture = testing::SourcePath("tests/fixtures/catalog");
  const std::vector<std::string> lora = {"--kind",       "lora",     "--model",
                                         "Llama-3.1-8B", "--tokens", "5e7"};
  auto plus = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  std::vector<CommandWriter> writers = {
      {"catalog export",
       {"--catalog", fixture, "catalog", "export", "out"},
       {"catalog", "export", "out"},
       "out",
       true},
      {"recommend --plot", plus({"--catalog", fixture, "recommend", "--plot", "plot.svg"}, lora),
       plus({"recommend", "--plot", "plot.svg"}, lora), "plot.svg", false},
      {"monitor --csv",
       {"monitor", "--interval", "0.05", "--csv", "m.csv", "--", "true"},
       {"monitor", "--interval", "0.05", "--csv", "m.csv", "--", "sleep", "0.2"},
       "m.csv",
       false},
      {"monitor --svg",
       {"monitor", "--interval", "0.05", "--svg", "m.svg", "--", "true"},
       {"monitor", "--interval", "0.05", "--svg", "m.svg", "--", "sleep", "0.2"},
       "m.svg",
       false},
      {"probe --out",
       {"--catalog", fixture, "probe", "--quick", "--cpu-only", "--quiet", "--out", "p.json"},
       {"probe", "--quick", "--cpu-only", "--quiet", "--out", "p.json"},
       "p.json",
       false},
      {"export --out",
       plus({"--catalog", fixture, "export", "--format", "skypilot", "--rank", "1", "--name",
             "old-task", "--out", "task.yaml"},
            lora),
       plus({"export", "--format", "skypilot", "--rank", "1", "--name", "new-task", "--out",
             "task.yaml"},
            lora),
       "task.yaml", false},
  };
  std::mt19937 random(15);
  for (const CommandWriter& w : writers) {
    TempDir dir;
    // Kills land anywhere in a whole run: its length is measured here (a release build exports
    // in milliseconds, a sanitizer build in a second), and each kill waits up to 1.5 times it.
    auto start = std::chrono::steady_clock::now();
    RunToEnd(Cloudfit(w.new_args), dir.path());
    auto whole = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    const int max_delay_us = static_cast<int>(whole.count() * 3 / 2);
    RunToEnd(Cloudfit(w.old_args), dir.path());
    std::string target = dir.path() + "/" + w.path;
    auto read = [&] {
      return w.directory ? Snapshot(target)
                         : std::map<std::string, std::string>{{"", ReadWholeFile(target)}};
    };
    const std::map<std::string, std::string> old_content = read();
    // The old content must differ from the new, or the test could not tell them apart.
    ASSERT_NE(old_content.size(), 0u) << w.name;
    ASSERT_FALSE(old_content.empty());
    int killed = 0;
    for (int i = 0; i < 8; ++i) {
      killed +=
          KillAfter(Spawn(Cloudfit(w.new_args), dir.path()), RandomDelay(random, max_delay_us));
      ASSERT_TRUE(fs::exists(target)) << w.name << ": iteration " << i;
      std::map<std::string, std::string> now = read();
      if (now == old_content) continue;
      // New content, and whole: what a complete run writes.
      if (w.directory) {
        EXPECT_TRUE(now.count("accelerators.csv") && now.count("models.csv")) << w.name;
        Catalog loaded;
        EXPECT_TRUE(Catalog::LoadDirectory(target, &loaded).ok()) << w.name;
      } else if (w.path.size() > 5 && w.path.substr(w.path.size() - 5) == ".json") {
        EXPECT_TRUE(nlohmann::json::accept(now[""])) << w.name << ": not whole JSON";
      } else if (w.path.size() > 4 && w.path.substr(w.path.size() - 4) == ".svg") {
        EXPECT_NE(now[""].find("</svg>\n"), std::string::npos) << w.name << ": cut short";
      } else {
        ASSERT_FALSE(now[""].empty());
        EXPECT_EQ(now[""].back(), '\n') << w.name << ": cut short";
      }
    }
    EXPECT_GT(killed, 0) << w.name << " always finished before the kill";
    RunToEnd(Cloudfit(w.new_args), dir.path());
    EXPECT_TRUE(Leftovers(dir.path()).empty()) << w.name << ": " << Leftovers(dir.path()).front();
  }
}

}  // namespace
}  // namespace cloudfit
