// The CSV reader and the typed row reader every catalog loader uses: any bytes parse or fail
// with a message, never crash; a field written with CsvEscape reads back the same.
#include "fuzz_support.h"
#include "util/csv.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  CsvOptions options;
  options.allow_comments = (data[0] & 1) != 0;
  std::string_view text = fuzz::AsText(data + 1, size - 1);
  CsvTable table;
  if (ParseCsv(text, "fuzz.csv", options, &table).ok()) {
    fuzz::Require(!table.header.empty(), "a parsed table has a header");
    for (const CsvRow& row : table.rows) {
      fuzz::Require(row.fields.size() == table.header.size(), "rows are as wide as the header");
      CsvRowReader r(table, row);
      for (const std::string& column : table.header) {
        (void)r.Text(column);
        (void)r.OptionalNumber(column, -1e9, 1e9);
        (void)r.YesNo(column);
      }
      (void)r.status().message();
      // Round trip: a field escaped and read back is the same field.
      std::string_view field = row.fields[0];
      if (!field.empty()) {
        CsvTable back;
        CsvOptions plain;
        plain.allow_comments = false;
        fuzz::Require(ParseCsv("a\n" + CsvEscape(field) + "\n", "back.csv", plain, &back).ok(),
                      "an escaped field parses");
        fuzz::Require(back.rows.size() == 1 && back.rows[0].fields[0] == field,
                      "an escaped field reads back unchanged");
      }
    }
  }
  return 0;
}
