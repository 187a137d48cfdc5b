// An AWS Price List offer file in its CSV form, read piece by piece as it downloads (a region's
// EC2 file is hundreds of megabytes to gigabytes). The layout, as the bulk API publishes it:
//   "FormatVersion","v1.0"
//   "Disclaimer","..."
//   "Publication Date","2026-11-20T18:02:47Z"
//   "Version","20261120180247"
//   "OfferCode","AmazonEC2"
//   "SKU","OfferTermCode","RateCode","TermType",...      <- the header
//   "...","...",...                                       <- one row per SKU and price term
// https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-an-offer.html
#ifndef CLOUDFIT_REFRESH_AWS_OFFER_FILE_H_
#define CLOUDFIT_REFRESH_AWS_OFFER_FILE_H_

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cloudfit/status.h"

namespace cloudfit::refresh {

class AwsOfferFileReader {
 public:
  // `where` names the file in errors ("aws: GET https://..."); `required` are header columns
  // that must be present.
  AwsOfferFileReader(std::string where, std::vector<std::string> required);

  // Called for every data row; fields are in header order (see Column).
  void set_row_handler(std::function<void(const std::vector<std::string>& row, long line)> fn) {
    on_row_ = std::move(fn);
  }

  // Feeds the next piece of the file. Returns false once an error is recorded (stop feeding).
  bool Feed(std::string_view chunk);
  // The end of the file: a last record cut off mid-line, a missing header or a file with no
  // rows is an error.
  Status Finish();

  // Index of a header column, or -1 (valid once the header has been read).
  int Column(const std::string& name) const;
  const std::string& publication_date() const { return publication_date_; }
  long data_rows() const { return data_rows_; }
  Status status() const { return error_.empty() ? Status::OK() : Status::Corruption(error_); }
  void Fail(long line, const std::string& problem);

 private:
  void Record(std::string_view text);

  std::string where_;
  std::vector<std::string> required_;
  std::function<void(const std::vector<std::string>&, long)> on_row_;
  std::string pending_;
  size_t scan_ = 0;
  bool in_quotes_ = false;
  long line_ = 0;
  long record_line_ = 1;
  bool header_read_ = false;
  long data_rows_ = 0;
  std::string publication_date_;
  std::unordered_map<std::string, int> columns_;
  std::vector<std::string> fields_;
  std::string error_;
};

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_AWS_OFFER_FILE_H_
