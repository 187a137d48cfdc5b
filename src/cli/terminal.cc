#include "cli/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "util/strings.h"

namespace cloudfit::cli {

namespace {

constexpr size_t kFallbackWidth = 80;
// A width below this is a mistake (COLUMNS=0, a tiny split pane): tables still need a minimum.
constexpr size_t kMinWidth = 20;

}  // namespace

size_t ChooseWidth(bool is_tty, size_t window, const char* columns_env) {
  double columns = 0;
  bool have_env = columns_env != nullptr && ParseDouble(columns_env, &columns) && columns >= 1 &&
                  columns <= 100000;
  if (is_tty && window > 0) return std::max(window, kMinWidth);
  if (have_env) return std::max(static_cast<size_t>(columns), kMinWidth);
  return is_tty ? kFallbackWidth : 0;
}

size_t OutputWidth() {
  bool tty = isatty(STDOUT_FILENO) == 1;
  size_t window = 0;
  if (tty) {
    winsize size{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) window = size.ws_col;
  }
  return ChooseWidth(tty, window, std::getenv("COLUMNS"));
}

bool ChooseColour(bool is_tty, const char* no_color_env, const char* term_env) {
  // no-color.org: set and not empty means no colour.
  if (!is_tty || (no_color_env != nullptr && no_color_env[0] != '\0')) return false;
  return term_env == nullptr || std::string_view(term_env) != "dumb";
}

bool ColourWanted() {
  return ChooseColour(isatty(STDOUT_FILENO) == 1, std::getenv("NO_COLOR"), std::getenv("TERM"));
}

std::string Styled(const std::string& text, const char* sgr, bool colour) {
  if (!colour || text.empty()) return text;
  return std::string("\033[") + sgr + "m" + text + "\033[0m";
}

}  // namespace cloudfit::cli
