// Packaging that cannot run here, checked statically: the Dockerfile (Docker has no engine on
// the test machines) and the generated manual page and shell completions.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "test_support.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;
using testing::RunProgram;

struct Instruction {
  int line = 0;
  std::string keyword;  // upper case
  std::string args;
};

// Dockerfile syntax: comments, parser directives, line continuations with '\', one instruction
// per logical line.
std::vector<Instruction> ParseDockerfile(const std::string& text, std::string* error) {
  static const std::set<std::string> kKeywords = {
      "FROM", "RUN",     "CMD",        "LABEL",       "EXPOSE", "ENV",
      "ADD",  "COPY",    "ENTRYPOINT", "VOLUME",      "USER",   "WORKDIR",
      "ARG",  "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"};
  std::vector<Instruction> out;
  std::istringstream in(text);
  std::string line, logical;
  int number = 0, start = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string trimmed = std::regex_replace(line, std::regex(R"(^\s+|\s+$)"), "");
    if (trimmed.empty() || trimmed[0] == '#') continue;  // comments, also inside continuations
    if (logical.empty()) start = number;
    bool continues = trimmed.back() == '\\';
    if (!logical.empty()) logical += ' ';
    logical += continues ? trimmed.substr(0, trimmed.size() - 1) : trimmed;
    if (continues) continue;
    std::smatch m;
    if (!std::regex_match(logical, m, std::regex(R"(([A-Za-z]+)\s+(.*))"))) {
      *error = "line " + std::to_string(start) + ": not an instruction: " + logical;
      return {};
    }
    std::string keyword = m[1];
    for (char& c : keyword) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!kKeywords.count(keyword)) {
      *error = "line " + std::to_string(start) + ": unknown instruction " + keyword;
      return {};
    }
    out.push_back({start, keyword, m[2]});
    logical.clear();
  }
  if (!logical.empty()) *error = "a continuation runs past the end of the file";
  return out;
}

// Exec form: a JSON array of strings.
std::vector<std::string> ExecForm(const std::string& args) {
  nlohmann::json j = nlohmann::json::parse(args, nullptr, false);
  if (!j.is_array()) return {};
  std::vector<std::string> out;
  for (const auto& v : j) {
    if (!v.is_string()) return {};
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<std::string> AptPackages(const std::string& run) {
  std::smatch m;
  if (!std::regex_search(run, m, std::regex(R"(apt-get install ((?:-\S+\s+)*)([^&]*))"))) return {};
  std::vector<std::string> packages;
  std::istringstream words(m[2].str());
  for (std::string w; words >> w;) {
    if (w[0] != '-') packages.push_back(w);
  }
  return packages;
}

TEST(DockerfileTest, BuildsOnDebianAndServesAsANonRootUserWithAHealthCheck) {
  std::string text = testing::ReadWholeFile(testing::SourcePath("packaging/Dockerfile"));
  ASSERT_FALSE(text.empty());
  std::string error;
  std::vector<Instruction> all = ParseDockerfile(text, &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_FALSE(all.empty());
  // Only ARG may come before the first FROM.
  size_t i = 0;
  std::map<std::string, std::string> args;
  for (; i < all.size() && all[i].keyword == "ARG"; ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(all[i].args, m, std::regex(R"((\w+)=(\S+))")));
    args[m[1]] = m[2];
  }
  ASSERT_LT(i, all.size());
  ASSERT_EQ(all[i].keyword, "FROM");
  // Stages: FROM image [AS name]; images are Debian's.
  std::vector<std::vector<Instruction>> stages;
  std::set<std::string> names;
  for (; i < all.size(); ++i) {
    if (all[i].keyword == "FROM") {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(all[i].args, m,
                                   std::regex(R"((\S+)(\s+AS\s+(\w+))?)", std::regex::icase)));
      std::string image = m[1];
      for (const auto& [k, v] : args)
        image = std::regex_replace(image, std::regex("\\$\\{" + k + "\\}"), v);
      EXPECT_TRUE(std::regex_match(image, std::regex(R"(debian:bookworm(-slim)?)"))) << image;
      if (m[3].matched) names.insert(m[3]);
      stages.emplace_back();
    }
    stages.back().push_back(all[i]);
  }
  ASSERT_EQ(stages.size(), 2u);
  const std::vector<Instruction>& runtime = stages.back();

  // COPY sources exist in the build context; --from names an earlier stage.
  std::vector<std::string> copied;
  for (const auto& stage : stages) {
    for (const Instruction& in : stage) {
      if (in.keyword != "COPY") continue;
      std::smatch m;
      if (std::regex_search(in.args, m, std::regex(R"(--from=(\w+))"))) {
        EXPECT_TRUE(names.count(m[1])) << "COPY --from=" << m[1];
        continue;
      }
      std::istringstream words(in.args);
      std::vector<std::string> parts;
      for (std::string w; words >> w;) parts.push_back(w);
      ASSERT_GE(parts.size(), 2u);
      for (size_t p = 0; p + 1 < parts.size(); ++p) {
        EXPECT_TRUE(fs::exists(testing::SourcePath(parts[p]))) << "COPY " << parts[p];
        copied.push_back(parts[p]);
      }
    }
  }

  // The runtime stage: a non-root user before the program starts, the port it serves on
  // exposed, `serve --host 0.0.0.0`, and a health check on /healthz of that port.
  std::string user, health;
  std::vector<std::string> command;
  std::set<std::string> exposed;
  std::vector<std::string> runtime_packages;
  for (const Instruction& in : runtime) {
    if (in.keyword == "USER") user = in.args;
    if (in.keyword == "EXPOSE") exposed.insert(in.args);
    if (in.keyword == "HEALTHCHECK") health = in.args;
    if (in.keyword == "RUN") {
      for (const std::string& p : AptPackages(in.args)) runtime_packages.push_back(p);
    }
    if (in.keyword == "ENTRYPOINT" || in.keyword == "CMD") {
      std::vector<std::string> form = ExecForm(in.args);
      ASSERT_FALSE(form.empty()) << in.keyword << " is not in exec form: " << in.args;
      EXPECT_FALSE(user.empty()) << in.keyword << " before USER";
      command.insert(command.end(), form.begin(), form.end());
    }
  }
  ASSERT_FALSE(user.empty());
  EXPECT_FALSE(std::regex_match(user, std::regex(R"((0|root)(:.*)?)"))) << user;
  std::string joined;
  for (const std::string& w : command) joined += w + " ";
  std::smatch port;
  ASSERT_TRUE(
      std::regex_search(joined, port, std::regex(R"(serve .*--host 0\.0\.0\.0 .*--port (\d+))")))
      << joined;
  EXPECT_TRUE(exposed.count(port[1])) << "EXPOSE " << port[1];
  std::smatch check;
  ASSERT_TRUE(std::regex_search(health, check, std::regex(R"(CMD\s+(\[.*\]))"))) << health;
  std::vector<std::string> probe = ExecForm(check[1]);
  ASSERT_FALSE(probe.empty()) << health;
  EXPECT_NE(probe.back().find(":" + port[1].str() + "/healthz"), std::string::npos) << health;
  EXPECT_NE(std::find(runtime_packages.begin(), runtime_packages.end(), probe.front()),
            runtime_packages.end())
      << probe.front() << " is not installed in the runtime stage";

  // The runtime stage installs the Debian package of every shared library the binary needs
  // (beyond the C and C++ runtimes every Debian image has), and nothing else but the health
  // check's program: build-only packages (headers, header-only libraries) stay in the build
  // stage. Needs dpkg and readelf, and a binary linked as the image's is (sanitizer builds
  // load libstdc++, fmt and yaml-cpp as shared libraries: CLOUDFIT_STATIC_RUNTIME).
  if (!CLOUDFIT_STATIC_RUNTIME) GTEST_SKIP() << "this build does not link its runtime in";
  testing::TempDir dir;
  testing::ProgramRun needed = RunProgram("/bin/sh", dir.path(),
                                          "-c 'readelf -d " + std::string(CLOUDFIT_BINARY) +
                                              " | sed -n \"s/.*NEEDED.*\\[\\(.*\\)\\]/\\1/p\"'");
  if (needed.exit_code != 0 || needed.out.empty()) GTEST_SKIP() << "readelf is not available";
  std::istringstream libraries(needed.out);
  std::set<std::string> needed_packages;
  for (std::string soname; libraries >> soname;) {
    // The C and C++ runtimes (with the dynamic loader, which a program that links libstdc++ in
    // names itself) are in every Debian image; sanitizer runtimes only in test builds.
    if (std::regex_match(
            soname,
            std::regex(
                R"((lib(c|m|gcc_s|stdc\+\+|pthread|dl|asan|ubsan|lsan|tsan)|ld-linux.*)\.so.*)"))) {
      continue;
    }
    testing::ProgramRun owner =
        RunProgram("/bin/sh", dir.path(), "-c 'dpkg -S \"*/" + soname + "\" | head -1'");
    if (owner.exit_code != 0 || owner.out.empty())
      GTEST_SKIP() << "dpkg cannot say which package has " << soname;
    std::string package = owner.out.substr(0, owner.out.find_first_of(":"));
    EXPECT_NE(std::find(runtime_packages.begin(), runtime_packages.end(), package),
              runtime_packages.end())
        << soname << " comes from " << package << ", which the runtime stage does not install";
    needed_packages.insert(package);
  }
  for (const std::string& package : runtime_packages) {
    EXPECT_TRUE(needed_packages.count(package) || package == probe.front())
        << "the runtime stage installs " << package
        << ", which neither has a library the binary links nor is the health check";
  }
}

// The build stage's `COPY` set is enough to configure the project with tests and benchmarks
// off, as the Dockerfile builds it: CMake checks every source file exists at generate time.
TEST(DockerfileTest, TheCopiedSourcesConfigure) {
  std::string text = testing::ReadWholeFile(testing::SourcePath("packaging/Dockerfile"));
  std::string error;
  std::vector<Instruction> all = ParseDockerfile(text, &error);
  ASSERT_TRUE(error.empty()) << error;
  testing::TempDir dir;
  fs::path context = fs::path(dir.path()) / "src";
  fs::create_directories(context);
  for (const Instruction& in : all) {
    if (in.keyword != "COPY" || in.args.find("--from") != std::string::npos) continue;
    std::istringstream words(in.args);
    std::vector<std::string> parts;
    for (std::string w; words >> w;) parts.push_back(w);
    for (size_t p = 0; p + 1 < parts.size(); ++p) {
      std::string relative = parts[p];
      if (!relative.empty() && relative.back() == '/') relative.pop_back();
      fs::copy(testing::SourcePath(relative), context / relative,
               fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
  }
  // Directories the top-level CMakeLists.txt reads by glob (data/, web/) configure even when
  // missing, so they are checked by name: every top-level directory it names is copied, except
  // tests/ and bench/, which the Dockerfile turns off, and fuzz/, read only with CLOUDFIT_FUZZ
  // (off unless asked for; the Dockerfile does not ask).
  std::string cmake = testing::ReadWholeFile(testing::SourcePath("CMakeLists.txt"));
  std::regex named(R"(\$\{CMAKE_SOURCE_DIR\}/([a-z]+)/)");
  for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), named);
       it != std::sregex_iterator(); ++it) {
    std::string top = (*it)[1];
    if (top == "tests" || top == "bench" || top == "fuzz") continue;
    EXPECT_TRUE(fs::exists(context / top))
        << "CMakeLists.txt reads " << top << "/, which the Dockerfile does not copy";
  }
  testing::ProgramRun run =
      RunProgram("cmake", dir.path(),
                 "-S src -B build -DCLOUDFIT_BUILD_TESTS=OFF -DCLOUDFIT_BUILD_BENCHMARKS=OFF");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

// --- Manual page and completions, as the build wrote them from the program's help text ---

std::string Docs(const std::string& relative) {
  return testing::ReadWholeFile(std::string(CLOUDFIT_BUILD_DIR) + "/share/" + relative);
}

TEST(ManpageTest, DocumentsEveryOptionOfEveryCommand) {
  std::string man = Docs("man/man1/cloudfit.1");
  ASSERT_FALSE(man.empty()) << "build the cloudfit_docs target";
  testing::TempDir dir;
  int options = 0;
  for (const char* command :
       {"recommend", "estimate", "export", "instances", "gpus", "catalog import", "serve"}) {
    testing::ProgramRun help = testing::RunCloudfit(dir, std::string(command) + " --help");
    ASSERT_EQ(help.exit_code, 0) << command;
    size_t section = man.find(".SS \"cloudfit " + std::string(command) + "\"");
    ASSERT_NE(section, std::string::npos) << command;
    size_t next = man.find(".SS ", section + 4);
    std::string body =
        man.substr(section, next == std::string::npos ? std::string::npos : next - section);
    std::regex flag(R"(--([a-z][a-z0-9-]+))");
    for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), flag);
         it != std::sregex_iterator(); ++it) {
      std::string roff = "\\-\\-" + std::regex_replace((*it)[1].str(), std::regex("-"), "\\-");
      if ((*it)[1] == "help") continue;
      EXPECT_NE(body.find(roff), std::string::npos)
          << command << " --" << (*it)[1] << " is not in the man page";
      ++options;
    }
  }
  EXPECT_GT(options, 100);
  // groff reads it without warnings, where groff is installed.
  testing::ProgramRun groff = RunProgram("/bin/sh", dir.path(), "-c 'command -v groff'");
  if (groff.exit_code == 0) {
    testing::ProgramRun render = RunProgram(
        "groff", dir.path(),
        "-man -Tutf8 -ww -z " + std::string(CLOUDFIT_BUILD_DIR) + "/share/man/man1/cloudfit.1");
    EXPECT_EQ(render.exit_code, 0);
    EXPECT_EQ(render.err, "") << "groff warnings";
  }
}

std::string Complete(const std::string& words) {
  testing::TempDir dir;
  std::string script =
      "source " + std::string(CLOUDFIT_BUILD_DIR) +
      "/share/completions/cloudfit.bash; COMP_WORDS=(" + words +
      "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _cloudfit; echo \"${COMPREPLY[*]}\"";
  return RunProgram("/bin/bash", dir.path(), "-c '" + script + "'").out;
}

TEST(CompletionTest, BashCompletesCommandsOptionsAndValues) {
  ASSERT_FALSE(Docs("completions/cloudfit.bash").empty()) << "build the cloudfit_docs target";
  EXPECT_EQ(Complete("cloudfit exp"), "explain export\n");
  EXPECT_EQ(Complete("cloudfit catalog im"), "import\n");
  EXPECT_EQ(Complete("cloudfit export --format \"\""), "skypilot terraform kubernetes\n");
  EXPECT_NE(Complete("cloudfit recommend --deadline").find("--deadline-hours"), std::string::npos);
  EXPECT_NE(Complete("cloudfit recommend --kind \"\"").find("qlora"), std::string::npos);
  // catalog's own export is not the top-level export: its options differ.
  EXPECT_EQ(Complete("cloudfit catalog export --for").find("--format"), std::string::npos);
}

TEST(CompletionTest, ZshAndFishScriptsParse) {
  testing::TempDir dir;
  for (const auto& [shell, file, check] :
       {std::tuple{"zsh", "completions/_cloudfit", "-n"},
        std::tuple{"fish", "completions/cloudfit.fish", "--no-execute"}}) {
    std::string text = Docs(file);
    ASSERT_FALSE(text.empty()) << file;
    EXPECT_NE(text.find("export"), std::string::npos);
    if (RunProgram("/bin/sh", dir.path(), std::string("-c 'command -v ") + shell + "'").exit_code !=
        0) {
      std::cout << shell << " is not installed: " << file << " not parsed\n";
      continue;
    }
    testing::ProgramRun run =
        RunProgram(shell, dir.path(),
                   std::string(check) + " " + std::string(CLOUDFIT_BUILD_DIR) + "/share/" + file);
    EXPECT_EQ(run.exit_code, 0) << shell << ": " << run.err;
    if (std::string(shell) == "fish") {
      testing::ProgramRun values = RunProgram(
          "fish", dir.path(),
          "-c 'source " + std::string(CLOUDFIT_BUILD_DIR) + "/share/" + file +
              "; complete -C \"cloudfit export --format \"; complete -C \"cloudfit catalog im\"'");
      EXPECT_NE(values.out.find("terraform"), std::string::npos) << values.out;
      EXPECT_NE(values.out.find("import"), std::string::npos) << values.out;
      EXPECT_EQ(values.out.find("out.txt"), std::string::npos) << "file names offered for --format";
    }
  }
}

}  // namespace
}  // namespace cloudfit
