#include "refresh/aws_offer_file.h"

#include <fmt/format.h>

#include "util/strings.h"

namespace cloudfit::refresh {

AwsOfferFileReader::AwsOfferFileReader(std::string where, std::vector<std::string> required)
    : where_(std::move(where)), required_(std::move(required)) {}

void AwsOfferFileReader::Fail(long line, const std::string& problem) {
  if (error_.empty()) error_ = fmt::format("{}: line {}: {}", where_, line, problem);
}

int AwsOfferFileReader::Column(const std::string& name) const {
  auto it = columns_.find(name);
  return it == columns_.end() ? -1 : it->second;
}

bool AwsOfferFileReader::Feed(std::string_view chunk) {
  if (!error_.empty()) return false;
  if (pending_.empty() && line_ == 0 && !chunk.empty()) {
    std::string_view start = Trim(chunk.substr(0, 64));
    if (!start.empty() && (start.front() == '<' || start.front() == '{')) {
      Fail(1, fmt::format("{} instead of the CSV offer file (an error page, or the .json form?)",
                          start.front() == '<' ? "an HTML or XML page" : "JSON"));
      return false;
    }
  }
  pending_.append(chunk);
  size_t start = 0;
  for (size_t i = scan_; i < pending_.size(); ++i) {
    char c = pending_[i];
    if (c == '"') {
      in_quotes_ = !in_quotes_;
    } else if (c == '\n') {
      ++line_;
      if (in_quotes_) continue;  // a quoted field may hold a line break
      Record(std::string_view(pending_).substr(start, i - start));
      if (!error_.empty()) return false;
      start = i + 1;
      record_line_ = line_ + 1;
    }
  }
  pending_.erase(0, start);
  scan_ = pending_.size();
  return true;
}

void AwsOfferFileReader::Record(std::string_view text) {
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (Trim(text).empty()) return;
  fields_.clear();
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields_.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  fields_.push_back(std::move(field));

  if (!header_read_) {
    const std::string& first = fields_[0];
    if (first == "SKU") {
      for (size_t i = 0; i < fields_.size(); ++i) columns_[fields_[i]] = static_cast<int>(i);
      for (const std::string& name : required_) {
        if (Column(name) < 0) {
          return Fail(record_line_, fmt::format("column '{}' is missing from the header (has the "
                                                "offer file's schema changed?)",
                                                name));
        }
      }
      header_read_ = true;
    } else if (first == "Publication Date" && fields_.size() > 1) {
      publication_date_ = fields_[1];
    } else if (first == "OfferCode" && fields_.size() > 1 && fields_[1] != "AmazonEC2") {
      Fail(record_line_, "offer code '" + fields_[1] + "', expected AmazonEC2");
    } else if (first != "FormatVersion" && first != "Disclaimer" && first != "Version" &&
               first != "OfferCode" && first != "Publication Date") {
      Fail(record_line_, fmt::format("'{}' before the header row (\"SKU\",...): not an offer file",
                                     first.substr(0, 40)));
    }
    return;
  }
  if (fields_.size() != columns_.size()) {
    return Fail(record_line_, fmt::format("{} fields where the header has {} (a cut-off or "
                                          "changed file?)",
                                          fields_.size(), columns_.size()));
  }
  ++data_rows_;
  if (on_row_) on_row_(fields_, record_line_);
}

Status AwsOfferFileReader::Finish() {
  if (error_.empty() && !Trim(pending_).empty()) {
    // A last line without its line break is whole only if its quotes close and it has every
    // field; anything else was cut off.
    if (in_quotes_) {
      Fail(record_line_, "the file ends inside a quoted field: truncated download");
    } else {
      Record(pending_);
      if (!error_.empty()) error_ += " (truncated download?)";
    }
    pending_.clear();
  }
  if (error_.empty() && !header_read_) Fail(line_, "no header row (\"SKU\",...): not an offer file");
  if (error_.empty() && data_rows_ == 0) Fail(line_, "no price rows");
  return status();
}

}  // namespace cloudfit::refresh
