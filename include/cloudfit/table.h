// A table of text cells rendered for people (aligned columns), for spreadsheets (CSV) or for
// documents (Markdown). JSON output is built from the typed values instead, by each report.
#ifndef CLOUDFIT_TABLE_H_
#define CLOUDFIT_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

namespace cloudfit {

enum class OutputFormat { kTable, kJson, kCsv, kMarkdown };

class Table {
 public:
  struct Column {
    std::string key;    // machine name, used as the CSV header
    std::string title;  // shown to people
    bool right_align = false;
  };

  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void AddRow(std::vector<std::string> cells);
  size_t size() const { return rows_.size(); }

  // kJson is not rendered here.
  std::string Render(OutputFormat format) const;

 private:
  std::string RenderText() const;
  std::string RenderCsv() const;
  std::string RenderMarkdown() const;

  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// Fixed-point with `digits` decimals and trailing zeros removed: 3.0600 -> "3.06", 8 -> "8".
std::string FormatNumber(double value, int digits = 2);

}  // namespace cloudfit

#endif  // CLOUDFIT_TABLE_H_
