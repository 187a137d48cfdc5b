// Calendar dates as days since 1970-01-01, parsed from and printed as ISO YYYY-MM-DD.
#ifndef CLOUDFIT_UTIL_DATE_H_
#define CLOUDFIT_UTIL_DATE_H_

#include <string>
#include <string_view>

namespace cloudfit {

// Parses a strict YYYY-MM-DD date into days since the epoch. Rejects impossible dates.
bool ParseIsoDate(std::string_view text, int* days_since_epoch);
std::string FormatIsoDate(int days_since_epoch);
// Today in UTC, or the date in CLOUDFIT_TODAY when it is set (reproducible tests and reports).
int TodayDays();

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_DATE_H_
