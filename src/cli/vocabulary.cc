#include "cli/vocabulary.h"

#include <set>

#include "util/strings.h"

namespace cloudfit::cli {

namespace {

// Walks the command line as CLI11 will: words naming a subcommand of the current command descend
// into it; "--" ends the walk. Calls visit(command, path, index) for every word.
template <typename Visit>
void Walk(const CLI::App& app, const std::vector<std::string>& args, Visit visit) {
  const CLI::App* current = &app;
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") return;
    if (!args[i].empty() && args[i][0] != '-') {
      const CLI::App* sub = nullptr;
      for (const CLI::App* s : current->get_subcommands([](const CLI::App*) { return true; })) {
        if (s->get_name() == args[i]) sub = s;
      }
      if (sub != nullptr) {
        current = sub;
        path = path.empty() ? args[i] : path + " " + args[i];
        continue;
      }
    }
    if (!visit(*current, path, i)) return;
  }
}

std::string FlagName(const std::string& word) { return word.substr(0, word.find('=')); }

// Long flag names a command accepts, with its parents' (the global --catalog).
std::vector<std::string> LongFlags(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* a = &command; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    }
  }
  return names;
}

bool TakesValue(const CLI::App& command, const std::string& flag) {
  for (const CLI::App* a = &command; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& n : o->get_lnames()) {
        if ("--" + n == flag) return o->get_type_size_max() > 0 && o->get_items_expected_max() > 0;
      }
    }
  }
  return false;
}

std::string Quoted(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

}  // namespace

const std::vector<DeprecatedFlag>& DeprecatedFlags() {
  // Each rename is one line of the audit in docs/cli.md; the reasons are there.
  static const std::vector<DeprecatedFlag> kFlags = {
      {"recommend", "--min-gpus", "--total-gpus-min"},
      {"recommend", "--max-gpus", "--total-gpus-max"},
      {"recommend", "--max-nodes", "--nodes-max"},
      {"export", "--min-gpus", "--total-gpus-min"},
      {"export", "--max-gpus", "--total-gpus-max"},
      {"export", "--max-nodes", "--nodes-max"},
      {"gpus", "--memory-min", "--gpu-memory-min"},
      {"probe", "--cpu-only", "--no-gpu"},
      {"monitor", "--csv", "--samples-csv", true},
      {"monitor", "--svg", "--plot"},
      {"catalog import", "--format", "--input-format"},
      {"catalog refresh", "--regions", "--region"},
      {"calibrate report", "--calibration", "--cases-dir"},
      {"calibrate fit", "--calibration", "--cases-dir"},
  };
  return kFlags;
}

std::vector<std::string> RewriteDeprecatedFlags(const CLI::App& app,
                                                const std::vector<std::string>& args,
                                                std::ostream& notices) {
  std::vector<std::string> out = args;
  std::set<std::string> told;
  Walk(app, args, [&](const CLI::App&, const std::string& path, size_t i) {
    if (args[i].rfind("--", 0) != 0) return true;
    std::string name = FlagName(args[i]);
    for (const DeprecatedFlag& d : DeprecatedFlags()) {
      if (d.command != path || d.old_name != name) continue;
      if (d.only_with_value) {
        bool has_value = args[i].find('=') != std::string::npos ||
                         (i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-');
        if (!has_value) continue;
      }
      out[i] = d.new_name + args[i].substr(name.size());
      if (told.insert(name).second) {
        notices << "cloudfit: note: " << path << " " << name << " is deprecated; use "
                << d.new_name << "\n";
      }
      break;
    }
    return true;
  });
  return out;
}

std::string ExplainUnknownWord(const CLI::App& app, const std::vector<std::string>& args) {
  std::string message;
  bool skip_value = false;
  Walk(app, args, [&](const CLI::App& command, const std::string& path, size_t i) {
    const std::string& word = args[i];
    std::string where = path.empty() ? "cloudfit" : "'" + path + "'";
    if (skip_value) {
      skip_value = false;
      return true;
    }
    if (word.rfind("--", 0) == 0) {
      std::string name = FlagName(word);
      std::vector<std::string> known = LongFlags(command);
      if (std::find(known.begin(), known.end(), name) != known.end()) {
        skip_value = word.find('=') == std::string::npos && TakesValue(command, name);
        return true;
      }
      std::vector<std::string> close = ClosestNames(name, known);
      message = "unknown option '" + name + "' for " + where +
                (close.empty() ? "" : "; did you mean " + Quoted(close) + "?") +
                " ('cloudfit " + (path.empty() ? "" : path + " ") + "--help' lists them)";
      return false;
    }
    // A word that is not an option: a misspelled subcommand where one is expected.
    std::vector<std::string> subs;
    for (const CLI::App* s : command.get_subcommands([](const CLI::App*) { return true; })) {
      subs.push_back(s->get_name());
    }
    if (!subs.empty() && command.get_option_no_throw(word) == nullptr) {
      bool has_positional = false;
      for (const CLI::Option* o : command.get_options()) {
        if (o->get_lnames().empty() && o->get_snames().empty()) has_positional = true;
      }
      if (has_positional) return true;
      std::vector<std::string> close = ClosestNames(word, subs);
      message = "unknown command '" + word + "' for " + where +
                (close.empty() ? "" : "; did you mean " + Quoted(close) + "?") +
                " Commands: " + Join(subs, ", ");
      return false;
    }
    return true;
  });
  return message;
}

}  // namespace cloudfit::cli
