#include "util/csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

int CsvTable::ColumnIndex(std::string_view name) const {
  auto it = column_index.find(name);
  return it == column_index.end() ? -1 : it->second;
}

Status CsvTable::RequireColumns(const std::vector<std::string_view>& names) const {
  for (std::string_view name : names) {
    if (ColumnIndex(name) < 0) {
      return Status::Corruption(fmt::format("{}:1: missing column '{}'", path, name));
    }
  }
  return Status::OK();
}

namespace {

// The characters that end a run of plain field text.
constexpr auto kSpecial = [] {
  std::array<bool, 256> special{};
  for (unsigned char c : {',', '\n', '\r', '"'}) special[c] = true;
  return special;
}();

// Splits the text into records. Returns false with a message on an unterminated quote.
// Outside quotes, '\r' is dropped wherever it stands (CRLF line ends) and a '"' opens a quoted
// part of the field wherever it stands. A field with neither is a view of `text`; one with
// either is made in `unquoted`.
bool SplitRecords(std::string_view text, std::deque<std::string>* unquoted,
                  std::vector<CsvRow>* records, std::string* error) {
  CsvRow current;
  size_t width = 0;            // fields of the first record: later ones reserve as many
  bool field_started = false;  // distinguishes an empty line from a line with one empty field
  int line = 1;
  current.line = 1;
  const char* p = text.data();
  const char* end = p + text.size();
  records->reserve(static_cast<size_t>(std::count(p, end, '\n')) + 1);
  const char* start = p;           // the field's first character
  const char* view_end = nullptr;  // where a view ends before p: a CRLF, a closing quote
  std::string* made = nullptr;     // the field as made in `unquoted`, once it needs to be
  auto end_field = [&]() {
    const char* last = view_end ? view_end : p;
    current.fields.push_back(made ? std::string_view(*made)
                                  : std::string_view(start, static_cast<size_t>(last - start)));
    made = nullptr;
    view_end = nullptr;
  };
  // Moves the field so far into `unquoted`, where what follows is appended.
  auto make = [&](const char* until) {
    if (made == nullptr) made = &unquoted->emplace_back(start, static_cast<size_t>(until - start));
  };
  auto end_record = [&]() {
    if (field_started || !current.fields.empty()) {
      end_field();
      if (width == 0) width = current.fields.size();
      records->push_back(std::move(current));
    }
    current = CsvRow();
    current.fields.reserve(width);
    made = nullptr;
    view_end = nullptr;
    field_started = false;
  };
  while (p < end) {
    const char* run = p;
    while (p < end && !kSpecial[static_cast<unsigned char>(*p)]) ++p;
    if (p > run) {
      if (made) made->append(run, static_cast<size_t>(p - run));
      field_started = true;
    }
    if (p == end) break;
    char c = *p;
    switch (c) {
      case '"': {
        field_started = true;
        int quote_line = line;
        // A field quoted whole, with no "" inside, is a view of the text between the quotes.
        if (made == nullptr && p == start) {
          // memchr: quoted fields are the long ones (SkyPilot's GpuInfo, ~250 bytes a row).
          auto* found =
              static_cast<const char*>(std::memchr(p + 1, '"', static_cast<size_t>(end - p - 1)));
          const char* close = found != nullptr ? found : end;
          const char* after = close + 1;
          if (close < end && (after == end || *after == ',' || *after == '\n' ||
                              (*after == '\r' && (after + 1 == end || after[1] == '\n')))) {
            if (std::memchr(p + 1, '\n', static_cast<size_t>(close - p - 1)) != nullptr) {
              line += static_cast<int>(std::count(p + 1, close, '\n'));
            }
            start = p + 1;
            view_end = close;
            // Past a CR of a CRLF, which would otherwise end the view there.
            p = after < end && *after == '\r' ? after + 1 : after;
            break;
          }
        }
        make(p);
        ++p;
        for (;;) {
          const char* quoted = p;
          while (p < end && *p != '"' && *p != '\n') ++p;
          made->append(quoted, static_cast<size_t>(p - quoted));
          if (p == end) {
            *error = fmt::format("{}: unterminated quoted field", quote_line);
            return false;
          }
          if (*p == '\n') {
            ++line;
            made->push_back(*p++);
          } else if (p + 1 < end && p[1] == '"') {
            made->push_back('"');
            p += 2;
          } else {
            ++p;
            break;
          }
        }
        break;
      }
      case ',':
        end_field();
        ++p;
        start = p;
        field_started = true;
        break;
      case '\r':
        // CRLF line ends: the '\n' ends the record. A CR elsewhere is dropped from the field.
        if (made == nullptr && (p + 1 == end || p[1] == '\n'))
          view_end = p;
        else
          make(p);
        ++p;
        break;
      case '\n':
        end_record();
        ++p;
        start = p;
        ++line;
        current.line = line;
        break;
    }
  }
  end_record();
  return true;
}

}  // namespace

Status ParseCsv(std::string_view text, std::string_view path, const CsvOptions& options,
                CsvTable* out) {
  out->path = std::string(path);
  out->header.clear();
  out->rows.clear();
  out->column_index.clear();
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // BOM

  auto storage = std::make_shared<CsvTable::Storage>();
  if (!options.borrow_text) {
    storage->text = std::string(text);
    text = storage->text;
  }
  out->storage = storage;
  std::vector<CsvRow> records;
  std::string error;
  if (!SplitRecords(text, &storage->unquoted, &records, &error)) {
    return Status::Corruption(fmt::format("{}:{}", path, error));
  }
  size_t first = 0;
  while (first < records.size() && options.allow_comments && !records[first].fields.empty() &&
         StartsWith(records[first].fields[0], "#")) {
    ++first;
  }
  if (first >= records.size()) {
    return Status::Corruption(fmt::format("{}: empty file, expected a header row", path));
  }
  for (std::string_view name : records[first].fields) {
    std::string trimmed(Trim(name));
    if (out->column_index.count(trimmed)) {
      return Status::Corruption(
          fmt::format("{}:{}: duplicate column '{}'", path, records[first].line, Shown(trimmed)));
    }
    out->column_index[trimmed] = static_cast<int>(out->header.size());
    out->header.push_back(trimmed);
  }
  // The data rows, kept in place: records becomes the table's rows.
  size_t kept = 0;
  for (size_t i = first + 1; i < records.size(); ++i) {
    CsvRow& row = records[i];
    if (options.allow_comments && StartsWith(row.fields[0], "#")) continue;
    if (row.fields.size() != out->header.size()) {
      return Status::Corruption(fmt::format("{}:{}: expected {} fields as in the header, found {}",
                                            path, row.line, out->header.size(), row.fields.size()));
    }
    if (kept != i) records[kept] = std::move(row);  // never onto itself
    ++kept;
  }
  records.resize(kept);
  out->rows = std::move(records);
  return Status::OK();
}

std::string CsvEscape(std::string_view field) {
  std::string out;
  AppendCsvField(field, &out);
  return out;
}

void AppendCsvField(std::string_view field, std::string* out) {
  bool plain = true;
  for (char c : field) plain &= !kSpecial[static_cast<unsigned char>(c)];
  if (plain) {
    out->append(field);
    return;
  }
  out->push_back('"');
  for (char c : field) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

std::string_view CsvRowReader::Text(CsvColumn column) const {
  if (column.index < 0) return {};
  return Trim(row_.fields[static_cast<size_t>(column.index)]);
}

void CsvRowReader::Fail(std::string_view column, std::string_view reason) {
  if (!status_.ok()) return;
  // Callers pass each value they echo through Shown (64 bytes, clean); the reason as a whole is
  // cleaned and bounded too, so that a value a caller forgot cannot make the message huge or
  // carry control bytes into a terminal or a JSON answer.
  constexpr size_t kMaxReasonBytes = 1024;
  status_ = Status::Corruption(fmt::format("{}:{}: field '{}': {}", table_.path, row_.line, column,
                                           Shown(reason, kMaxReasonBytes)));
}

std::string CsvRowReader::RequiredText(CsvColumn column) {
  std::string_view text = Text(column);
  if (text.empty()) Fail(column.name, "missing value");
  return std::string(text);
}

std::string CsvRowReader::RequiredName(CsvColumn column) {
  std::string text = RequiredText(column);
  if (!status_.ok()) return text;
  if (Status s = CheckName("", text); !s.ok()) Fail(column.name, s.message());
  return text;
}

std::optional<double> CsvRowReader::OptionalNumber(CsvColumn column, double min, double max) {
  std::string_view text = Text(column);
  if (text.empty()) return std::nullopt;
  double value = 0;
  // A row keeps its first error only: later ones are not formatted at all.
  if (!ParseDouble(text, &value)) {
    if (status_.ok()) Fail(column.name, fmt::format("'{}' is not a number", Shown(text)));
    return std::nullopt;
  }
  if (value < min || value > max) {
    if (status_.ok()) {
      Fail(column.name, fmt::format("{} is out of range [{}, {}]", Shown(text), min, max));
    }
    return std::nullopt;
  }
  return value;
}

double CsvRowReader::Number(CsvColumn column, double min, double max) {
  if (Text(column).empty()) {
    Fail(column.name, "missing value");
    return 0;
  }
  return OptionalNumber(column, min, max).value_or(0);
}

bool CsvRowReader::YesNo(CsvColumn column, bool default_value) {
  std::string value = ToLower(Text(column));
  if (value.empty()) return default_value;
  if (value == "yes" || value == "true" || value == "1") return true;
  if (value == "no" || value == "false" || value == "0") return false;
  if (status_.ok()) Fail(column.name, fmt::format("'{}' is not yes or no", Shown(value)));
  return default_value;
}

}  // namespace cloudfit
