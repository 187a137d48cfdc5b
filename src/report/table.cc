#include "cloudfit/table.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include <fmt/format.h>

#include "util/csv.h"

namespace cloudfit {

namespace {

// Display width in terminal columns: count code points, not bytes.
size_t DisplayWidth(std::string_view s) {
  size_t width = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++width;
  }
  return width;
}

std::string Pad(std::string_view s, size_t width, bool right) {
  size_t w = DisplayWidth(s);
  std::string padding(width > w ? width - w : 0, ' ');
  return right ? padding + std::string(s) : std::string(s) + padding;
}

std::string MarkdownEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace

void Table::AddRow(std::vector<std::string> cells) {
  assert(cells.size() == columns_.size());
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render(OutputFormat format) const {
  switch (format) {
    case OutputFormat::kCsv:
      return RenderCsv();
    case OutputFormat::kMarkdown:
      return RenderMarkdown();
    case OutputFormat::kTable:
    case OutputFormat::kJson:
      break;
  }
  return RenderText();
}

std::string Table::RenderText() const {
  std::vector<size_t> widths;
  for (const Column& c : columns_) widths.push_back(DisplayWidth(c.title));
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out += "  ";
      bool last = i + 1 == cells.size();
      out += last && !columns_[i].right_align ? cells[i]
                                              : Pad(cells[i], widths[i], columns_[i].right_align);
    }
    return out + "\n";
  };
  std::vector<std::string> titles;
  for (const Column& c : columns_) titles.push_back(c.title);
  std::string out = line(titles);
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string Table::RenderCsv() const {
  // Appended piece by piece: `"," + std::string` made GCC 12 warn (-Wrestrict, a false positive
  // of its string inlining, GCC bug 105329) and built a temporary for every cell.
  std::string out;
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (i > 0) out += ',';
    out += CsvEscape(columns_[i].key);
  }
  out += "\n";
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out += ',';
      out += CsvEscape(row[i]);
    }
    out += "\n";
  }
  return out;
}

std::string Table::RenderMarkdown() const {
  std::string out = "|";
  for (const Column& c : columns_) {
    out += ' ';
    out += MarkdownEscape(c.title);
    out += " |";
  }
  out += "\n|";
  for (const Column& c : columns_) out += c.right_align ? "---:|" : "---|";
  out += "\n";
  for (const auto& row : rows_) {
    out += "|";
    for (const std::string& cell : row) {
      out += ' ';
      out += MarkdownEscape(cell);
      out += " |";
    }
    out += "\n";
  }
  return out;
}

std::string FormatNumber(double value, int digits) {
  std::string s = fmt::format("{:.{}f}", value, digits);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace cloudfit
