// What the program knows about where its output goes: the terminal's width and whether colour
// is wanted. Tables narrow to the width; colour appears only on a terminal and never when the
// NO_COLOR convention (https://no-color.org) asks for none.
#ifndef CLOUDFIT_CLI_TERMINAL_H_
#define CLOUDFIT_CLI_TERMINAL_H_

#include <cstddef>
#include <optional>
#include <string>

namespace cloudfit::cli {

// Columns available for a table on standard output. On a terminal: the window size
// (ioctl TIOCGWINSZ), else $COLUMNS, else 80. Not on a terminal (a pipe or a file): $COLUMNS when
// set, else 0, meaning no limit, so a script reading the table gets every column.
size_t OutputWidth();

// The rule above as a pure function, for tests: `window` is the TIOCGWINSZ width (0 = none).
size_t ChooseWidth(bool is_tty, size_t window, const char* columns_env);

// Colour on standard output: only on a terminal, never with NO_COLOR set (to anything but empty) or with
// TERM=dumb.
bool ColourWanted();
bool ChooseColour(bool is_tty, const char* no_color_env, const char* term_env);

// Wraps `text` in the SGR sequence when `colour` is true: bold (1) or yellow (33).
std::string Styled(const std::string& text, const char* sgr, bool colour);

}  // namespace cloudfit::cli

#endif  // CLOUDFIT_CLI_TERMINAL_H_
