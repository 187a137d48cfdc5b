#include "cloudfit/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "util/csv.h"

namespace cloudfit {

namespace {

// Appends `gap` spaces, then `s` (`w` display columns wide) padded with spaces to `width`.
void AppendPadded(std::string* out, size_t gap, std::string_view s, size_t w, size_t width,
                  bool right) {
  size_t padding = width > w ? width - w : 0;
  size_t at = out->size() + gap;
  out->resize(at + padding + s.size(), ' ');
  if (!s.empty()) std::memcpy(out->data() + at + (right ? padding : 0), s.data(), s.size());
}

std::string MarkdownEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

// The narrowest a cut last column may get before hiding another column is the better choice.
constexpr size_t kMinCutWidth = 12;

}  // namespace

size_t DisplayWidth(std::string_view s) {
  // Bytes that start a code point (not 10xxxxxx), eight at a time: a table measures every cell.
  constexpr uint64_t kLow = 0x0101010101010101ULL;
  size_t continuation = 0;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, s.data() + i, 8);
    continuation += static_cast<size_t>(std::popcount((x >> 7) & ~(x >> 6) & kLow));
  }
  for (; i < s.size(); ++i) continuation += (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80;
  return s.size() - continuation;
}

std::string TruncateToWidth(std::string_view s, size_t width) {
  if (DisplayWidth(s) <= width) return std::string(s);
  if (width == 0) return "";
  std::string out;
  size_t used = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (used + 1 == width) break;
      ++used;
    }
    out += s[i];
  }
  return out + "\xe2\x80\xa6";  // U+2026 HORIZONTAL ELLIPSIS
}

void Table::AddRow(std::vector<TableCell> cells) {
  assert(cells.size() == columns_.size());
  cells.resize(columns_.size(), TableCell(""));
  for (const TableCell& c : cells) {
    Cell& cell = cells_.emplace_back();
    cell.offset = static_cast<uint32_t>(text_.size());
    cell.size = static_cast<uint32_t>(c.text.size());
    cell.unknown = c.unknown;
    text_ += c.text;
    cell.width = static_cast<uint32_t>(DisplayWidth(PeopleText(cell)));
  }
  ++rows_;
}

// What people see in a cell: "-" for an unknown value.
std::string_view Table::PeopleText(const Cell& cell) const {
  return cell.unknown ? std::string_view("-") : Text(cell);
}

std::vector<size_t> Table::ColumnsFor(Audience audience) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < columns_.size(); ++i) {
    Audience a = columns_[i].audience;
    if (a == Audience::kEveryone || a == audience) out.push_back(i);
  }
  return out;
}

std::string Table::Render(OutputFormat format, const TextLayout& layout) const {
  switch (format) {
    case OutputFormat::kCsv:
      return RenderCsv();
    case OutputFormat::kMarkdown:
      return RenderMarkdown();
    case OutputFormat::kTable:
    case OutputFormat::kJson:
      break;
  }
  return RenderText(layout);
}

std::string Table::RenderText(const TextLayout& layout) const {
  std::vector<size_t> shown = ColumnsFor(Audience::kPeople);
  std::vector<size_t> widths(columns_.size(), 0);
  for (size_t i : shown) {
    widths[i] = DisplayWidth(columns_[i].title);
    for (size_t r = 0; r < rows_; ++r) widths[i] = std::max<size_t>(widths[i], At(r, i).width);
  }
  auto total = [&]() {
    size_t sum = shown.empty() ? 0 : 2 * (shown.size() - 1);
    for (size_t i : shown) sum += widths[i];
    return sum;
  };
  // Narrow to the terminal: cut a wide last text column down to kMinCutWidth, then hide the
  // least important columns (highest priority number, rightmost first) until the rest fit.
  std::vector<std::string> hidden;
  size_t last_width = 0;  // 0 = the last column is not cut
  if (layout.max_width > 0) {
    auto cut_last = [&]() -> bool {
      size_t last = shown.back();
      if (columns_[last].right_align) return false;
      size_t others = total() - widths[last];
      if (others + kMinCutWidth > layout.max_width) return false;
      last_width = std::min(widths[last], layout.max_width - others);
      return true;
    };
    while (!shown.empty() && total() > layout.max_width && !cut_last()) {
      size_t victim = shown.size();
      for (size_t k = 0; k < shown.size(); ++k) {
        int p = columns_[shown[k]].priority;
        if (p > 0 && (victim == shown.size() || p >= columns_[shown[victim]].priority)) victim = k;
      }
      if (victim == shown.size()) break;  // nothing left to hide
      hidden.push_back(columns_[shown[victim]].title);
      shown.erase(shown.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }
  // Each line is appended in place (no per-row copies of the cells): a listing of the whole
  // catalog renders ~1,400 rows.
  std::string out;
  out.reserve((total() + 1) * (rows_ + 1));
  // cell(i) is column i's text and display width.
  auto line = [&](auto cell) {
    size_t start = out.size();
    for (size_t k = 0; k < shown.size(); ++k) {
      size_t i = shown[k];
      bool last = k + 1 == shown.size();
      bool right = columns_[i].right_align;
      auto [text, w] = cell(i);
      std::string cut;
      if (last && last_width > 0 && w > last_width) {
        cut = TruncateToWidth(text, last_width);
        text = cut;
        w = DisplayWidth(cut);
      }
      AppendPadded(&out, k > 0 ? 2 : 0, text, w, last && !right ? 0 : widths[i], right);
    }
    while (out.size() > start && out.back() == ' ') out.pop_back();
    out += '\n';
  };
  if (layout.colour) out += "\033[1m";
  line([&](size_t i) {
    return std::pair<std::string_view, size_t>(columns_[i].title, DisplayWidth(columns_[i].title));
  });
  if (layout.colour) out.insert(out.size() - 1, "\033[0m");
  for (size_t r = 0; r < rows_; ++r) {
    line([&](size_t i) {
      const Cell& cell = At(r, i);
      return std::pair<std::string_view, size_t>(PeopleText(cell), cell.width);
    });
  }
  if (!hidden.empty()) {
    std::string names;
    for (const std::string& h : hidden) names += (names.empty() ? "" : ", ") + h;
    out += "(hidden to fit " + std::to_string(layout.max_width) + " columns: " + names +
           "; --wide shows every column)\n";
  }
  return out;
}

std::string Table::RenderCsv() const {
  // Appended piece by piece: `"," + std::string` made GCC 12 warn (-Wrestrict, a false positive
  // of its string inlining, GCC bug 105329) and built a temporary for every cell.
  std::vector<size_t> shown = ColumnsFor(Audience::kMachines);
  std::string out;
  for (size_t k = 0; k < shown.size(); ++k) {
    if (k > 0) out += ',';
    out += CsvEscape(columns_[shown[k]].key);
  }
  out += "\n";
  for (size_t r = 0; r < rows_; ++r) {
    for (size_t k = 0; k < shown.size(); ++k) {
      if (k > 0) out += ',';
      out += CsvEscape(Text(At(r, shown[k])));
    }
    out += "\n";
  }
  return out;
}

std::string Table::RenderMarkdown() const {
  std::vector<size_t> shown = ColumnsFor(Audience::kPeople);
  std::string out = "|";
  for (size_t i : shown) {
    out += ' ';
    out += MarkdownEscape(columns_[i].title);
    out += " |";
  }
  out += "\n|";
  for (size_t i : shown) out += columns_[i].right_align ? "---:|" : "---|";
  out += "\n";
  for (size_t r = 0; r < rows_; ++r) {
    out += "|";
    for (size_t i : shown) {
      out += ' ';
      out += MarkdownEscape(PeopleText(At(r, i)));
      out += " |";
    }
    out += "\n";
  }
  return out;
}

namespace {

// FormatNumber's common case without std::to_chars' exact decimal expansion (~500 instructions
// a number; a listing of the catalog formats ~6,000): value * 10^digits rounded to an integer.
// The product is within half an ulp of the exact one, so the rounding is certain unless the
// fraction lies within 1e-3 of one half (below 1e12 an ulp is at most 1.2e-4); those, and
// large or non-finite values, return false and take the exact path.
bool FormatNumberFast(double value, int digits, std::string* out) {
  static constexpr double kPowers[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  if (digits < 0 || digits > 6 || !std::isfinite(value)) return false;
  double scaled = std::fabs(value) * kPowers[digits];
  if (!(scaled < 1e12)) return false;
  double whole = std::floor(scaled);
  double fraction = scaled - whole;
  if (std::fabs(fraction - 0.5) < 1e-3) return false;
  auto n = static_cast<uint64_t>(whole) + (fraction > 0.5 ? 1 : 0);
  auto unit = static_cast<uint64_t>(kPowers[digits]);
  uint64_t integer = n / unit, decimals = n % unit;
  int kept = digits;  // decimals without their trailing zeros
  while (kept > 0 && decimals % 10 == 0) {
    decimals /= 10;
    --kept;
  }
  char buffer[40];
  char* p = buffer;
  if (value < 0 && n != 0) *p++ = '-';  // "-0" prints as "0"
  p = std::to_chars(p, buffer + sizeof buffer, integer).ptr;
  if (kept > 0) {
    *p++ = '.';
    for (int k = kept - 1; k >= 0; --k) {
      p[k] = static_cast<char>('0' + decimals % 10);
      decimals /= 10;
    }
    p += kept;
  }
  out->assign(buffer, p);
  return true;
}

}  // namespace

std::string FormatNumber(double value, int digits) {
  std::string s;
  if (FormatNumberFast(value, digits, &s)) return s;
  // std::to_chars writes the correctly rounded digits printf and fmt write, without fmt's
  // format-string parsing (an answer formats a few hundred numbers); fmt keeps the rest.
  char buffer[400];
  auto [end, ec] =
      std::isfinite(value) && digits >= 0 && digits <= 20
          ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, digits)
          : std::to_chars_result{buffer, std::errc::value_too_large};
  if (ec == std::errc()) {
    s.assign(buffer, end);
  } else {
    s = fmt::format("{:.{}f}", value, digits);
  }
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

}  // namespace cloudfit
