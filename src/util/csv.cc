#include "util/csv.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

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

// Splits the text into records. Returns false with a message on an unterminated quote.
// Outside quotes, runs of ordinary characters are copied whole; '\r' is dropped wherever it
// stands (CRLF line ends), a '"' opens a quoted part of the field wherever it stands.
bool SplitRecords(std::string_view text, std::vector<CsvRow>* records, std::string* error) {
  CsvRow current;
  size_t width = 0;  // fields of the first record: later ones reserve as many
  std::string field;
  bool field_started = false;  // distinguishes an empty line from a line with one empty field
  int line = 1;
  current.line = 1;
  auto end_record = [&]() {
    if (field_started || !current.fields.empty()) {
      current.fields.push_back(std::move(field));
      if (width == 0) width = current.fields.size();
      records->push_back(std::move(current));
    }
    current = CsvRow();
    current.fields.reserve(width);
    field.clear();
    field_started = false;
  };
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    const char* run = p;
    while (p < end && *p != ',' && *p != '\n' && *p != '\r' && *p != '"') ++p;
    if (p > run) {
      field.append(run, static_cast<size_t>(p - run));
      field_started = true;
    }
    if (p == end) break;
    switch (*p++) {
      case '"': {
        field_started = true;
        int quote_line = line;
        for (;;) {
          const char* quoted = p;
          while (p < end && *p != '"' && *p != '\n') ++p;
          field.append(quoted, static_cast<size_t>(p - quoted));
          if (p == end) {
            *error = fmt::format("{}: unterminated quoted field", quote_line);
            return false;
          }
          if (*p == '\n') {
            ++line;
            field.push_back(*p++);
          } else if (p + 1 < end && p[1] == '"') {
            field.push_back('"');
            p += 2;
          } else {
            ++p;
            break;
          }
        }
        break;
      }
      case ',':
        current.fields.push_back(std::move(field));
        field.clear();
        field_started = true;
        break;
      case '\r':
        break;  // CRLF line ends: the '\n' ends the record
      case '\n':
        end_record();
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

  std::vector<CsvRow> records;
  std::string error;
  if (!SplitRecords(text, &records, &error)) {
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
  for (std::string& name : records[first].fields) {
    std::string trimmed(Trim(name));
    if (out->column_index.count(trimmed)) {
      return Status::Corruption(
          fmt::format("{}:{}: duplicate column '{}'", path, records[first].line, Shown(trimmed)));
    }
    out->column_index[trimmed] = static_cast<int>(out->header.size());
    out->header.push_back(trimmed);
  }
  for (size_t i = first + 1; i < records.size(); ++i) {
    CsvRow& row = records[i];
    if (options.allow_comments && StartsWith(row.fields[0], "#")) continue;
    if (row.fields.size() != out->header.size()) {
      return Status::Corruption(fmt::format("{}:{}: expected {} fields as in the header, found {}",
                                            path, row.line, out->header.size(),
                                            row.fields.size()));
    }
    out->rows.push_back(std::move(row));
  }
  return Status::OK();
}

std::string CsvEscape(std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string_view CsvRowReader::Text(CsvColumn column) const {
  if (column.index < 0) return {};
  return Trim(row_.fields[static_cast<size_t>(column.index)]);
}

void CsvRowReader::Fail(std::string_view column, std::string_view reason) {
  if (!status_.ok()) return;
  status_ = Status::Corruption(
      fmt::format("{}:{}: field '{}': {}", table_.path, row_.line, column, reason));
}

std::string CsvRowReader::RequiredText(CsvColumn column) {
  std::string_view text = Text(column);
  if (text.empty()) Fail(column.name, "missing value");
  return std::string(text);
}

std::optional<double> CsvRowReader::OptionalNumber(CsvColumn column, double min, double max) {
  std::string_view text = Text(column);
  if (text.empty()) return std::nullopt;
  double value = 0;
  if (!ParseDouble(text, &value)) {
    Fail(column.name, fmt::format("'{}' is not a number", Shown(text)));
    return std::nullopt;
  }
  if (value < min || value > max) {
    Fail(column.name, fmt::format("{} is out of range [{}, {}]", Shown(text), min, max));
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
  Fail(column.name, fmt::format("'{}' is not yes or no", Shown(value)));
  return default_value;
}

}  // namespace cloudfit
