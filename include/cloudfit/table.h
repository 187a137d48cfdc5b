// A table of cells rendered for people (aligned columns that fit the terminal), for
// spreadsheets (CSV: a header and rows only) or for documents (Markdown). JSON output is built
// from the typed values instead, by each report.
//
// People and machines read different columns of the same table: a person reads "8x A100" and
// "13.2/24.0", a program wants `gpus`, `gpu`, `memory_used_gib` and `memory_capacity_gib` as
// separate numbers without units. A column says who it is for; CSV headers carry the units.
#ifndef CLOUDFIT_TABLE_H_
#define CLOUDFIT_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cloudfit {

enum class OutputFormat { kTable, kJson, kCsv, kMarkdown };

// Who reads a column: the text table and Markdown are for people, CSV is for machines.
enum class Audience { kEveryone, kPeople, kMachines };

// One cell. An unknown value renders as "-" for people and as an empty CSV field, so no
// program reads "unknown" or "-" as a value.
struct TableCell {
  std::string text;
  bool unknown = false;
  TableCell(std::string t) : text(std::move(t)) {}  // NOLINT: implicit, so rows are brace lists
  TableCell(const char* t) : text(t) {}             // NOLINT
  TableCell(std::string_view t) : text(t) {}        // NOLINT
  static TableCell Unknown() {
    TableCell c("");
    c.unknown = true;
    return c;
  }
};

// How a text table is laid out on a terminal.
struct TextLayout {
  size_t max_width = 0;  // columns of the terminal; 0 = no limit (--wide, or not a terminal)
  bool colour = false;   // bold header (only on a TTY, never with NO_COLOR)
};

class Table {
 public:
  struct Column {
    std::string key;  // machine name, used as the CSV header; carries the unit (price_usd_per_hour)
    std::string title;  // shown to people
    bool right_align = false;
    // 0: always shown. Larger numbers are less important and are hidden first when the text
    // table must narrow to fit the terminal.
    int priority = 0;
    Audience audience = Audience::kEveryone;
  };

  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void AddRow(std::vector<TableCell> cells);
  size_t size() const { return rows_; }

  // kJson is not rendered here. `layout` applies to kTable only.
  std::string Render(OutputFormat format, const TextLayout& layout = {}) const;

 private:
  std::string RenderText(const TextLayout& layout) const;
  std::string RenderCsv() const;
  std::string RenderMarkdown() const;
  std::vector<size_t> ColumnsFor(Audience audience) const;

  // A cell as kept: its text in text_, and the display width of what people see ("-" when
  // unknown), measured once. Flat, not a vector of strings per row: a listing of the whole
  // catalog has ~16,000 cells, and a string each was ~650 KB of heap to touch.
  struct Cell {
    uint32_t offset = 0;
    uint32_t size = 0;
    uint32_t width = 0;
    bool unknown = false;
  };
  std::string_view Text(const Cell& cell) const { return {text_.data() + cell.offset, cell.size}; }
  std::string_view PeopleText(const Cell& cell) const;
  const Cell& At(size_t row, size_t column) const { return cells_[row * columns_.size() + column]; }

  std::vector<Column> columns_;
  std::string text_;         // every cell's text, end to end
  std::vector<Cell> cells_;  // row after row, a cell per column
  size_t rows_ = 0;
};

// Fixed-point with `digits` decimals and trailing zeros removed: 3.0600 -> "3.06", 8 -> "8".
std::string FormatNumber(double value, int digits = 2);

// Display width in terminal columns (code points; no wide-character tables).
size_t DisplayWidth(std::string_view s);

// Cuts `s` to at most `width` display columns, ending in "…" when it was cut.
std::string TruncateToWidth(std::string_view s, size_t width);

}  // namespace cloudfit

#endif  // CLOUDFIT_TABLE_H_
