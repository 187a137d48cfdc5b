// A small RFC 4180 CSV reader, and a row reader that turns fields into typed values while
// remembering the first error with its file, line and column.
#ifndef CLOUDFIT_UTIL_CSV_H_
#define CLOUDFIT_UTIL_CSV_H_

#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cloudfit/status.h"
#include "util/strings.h"

namespace cloudfit {

struct CsvRow {
  int line = 0;  // 1-based line where the row starts
  // Views of the text the table keeps (CsvTable::storage): valid as long as the table, or a
  // copy of it, lives.
  std::vector<std::string_view> fields;
};

// A column found once by name, so that the rows of a large file read it by index.
struct CsvColumn {
  std::string_view name;
  int index = -1;  // -1: the header has no such column
};

struct CsvTable {
  std::string path;  // shown in error messages
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  // The parsed text (unless borrowed: CsvOptions), and the fields that quotes or CRs made differ
  // from it: what the rows' views point into. Shared, so copies of the table stay valid.
  struct Storage {
    std::string text;
    std::deque<std::string> unquoted;
  };
  std::shared_ptr<const Storage> storage;

  // Index of a header column, or -1.
  int ColumnIndex(std::string_view name) const;
  CsvColumn Column(std::string_view name) const { return {name, ColumnIndex(name)}; }
  // Corruption naming the first of `names` that the header lacks.
  Status RequireColumns(const std::vector<std::string_view>& names) const;

  std::unordered_map<std::string, int, StringHash, std::equal_to<>> column_index;
};

struct CsvOptions {
  // Skip rows whose first field starts with '#' (our own data files allow comments).
  bool allow_comments = true;
  // The caller keeps the text alive and unchanged as long as the table (and its copies) live:
  // the rows view it instead of a copy (megabytes of import files and catalogs).
  bool borrow_text = false;
};

// Parses `text`; blank lines are skipped, CRLF is accepted, a row whose field count differs
// from the header's is an error naming path:line.
Status ParseCsv(std::string_view text, std::string_view path, const CsvOptions& options,
                CsvTable* out);

// Quotes a field for CSV output when it needs it.
std::string CsvEscape(std::string_view field);
// The same, appended to `out` (no string per field when writing large files).
void AppendCsvField(std::string_view field, std::string* out);

// Reads typed fields of one row. The first failure is kept and later calls return defaults,
// so a loader can read every field and check status() once.
class CsvRowReader {
 public:
  CsvRowReader(const CsvTable& table, const CsvRow& row) : table_(table), row_(row) {}

  // Each reads a column named here or found once with CsvTable::Column.
  // The trimmed text of a column; "" when the column is absent from the header.
  std::string_view Text(std::string_view column) const { return Text(table_.Column(column)); }
  std::string_view Text(CsvColumn column) const;
  // Like Text, but an empty value is an error.
  std::string RequiredText(std::string_view column) { return RequiredText(table_.Column(column)); }
  std::string RequiredText(CsvColumn column);
  // Empty -> nullopt. Otherwise a finite number in [min, max], or an error.
  std::optional<double> OptionalNumber(std::string_view column, double min = 0,
                                       double max = std::numeric_limits<double>::max()) {
    return OptionalNumber(table_.Column(column), min, max);
  }
  std::optional<double> OptionalNumber(CsvColumn column, double min = 0,
                                       double max = std::numeric_limits<double>::max());
  // Like RequiredText, and within the limits of every name (util/validate.h: at most 256 bytes
  // of UTF-8, no control characters): models, GPUs, instance types, regions, providers.
  std::string RequiredName(std::string_view column) { return RequiredName(table_.Column(column)); }
  std::string RequiredName(CsvColumn column);
  // A number that must be present.
  double Number(std::string_view column, double min = 0,
                double max = std::numeric_limits<double>::max()) {
    return Number(table_.Column(column), min, max);
  }
  double Number(CsvColumn column, double min = 0, double max = std::numeric_limits<double>::max());
  // "yes"/"no" (also true/false, 1/0); empty -> default_value.
  bool YesNo(std::string_view column, bool default_value = false) {
    return YesNo(table_.Column(column), default_value);
  }
  bool YesNo(CsvColumn column, bool default_value = false);

  // Records an error about `column` unless one is already recorded.
  void Fail(std::string_view column, std::string_view reason);

  const Status& status() const { return status_; }
  int line() const { return row_.line; }

 private:
  const CsvTable& table_;
  const CsvRow& row_;
  Status status_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_CSV_H_
