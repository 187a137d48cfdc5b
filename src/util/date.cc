#include "util/date.h"

#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "util/strings.h"

namespace cloudfit {

bool ParseIsoDate(std::string_view text, int* days_since_epoch) {
  text = Trim(text);
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  long long y = 0, m = 0, d = 0;
  if (!ParseInt(text.substr(0, 4), &y) || !ParseInt(text.substr(5, 2), &m) ||
      !ParseInt(text.substr(8, 2), &d)) {
    return false;
  }
  std::chrono::year_month_day date{std::chrono::year(static_cast<int>(y)),
                                   std::chrono::month(static_cast<unsigned>(m)),
                                   std::chrono::day(static_cast<unsigned>(d))};
  if (!date.ok()) return false;
  *days_since_epoch = std::chrono::sys_days(date).time_since_epoch().count();
  return true;
}

std::string FormatIsoDate(int days_since_epoch) {
  std::chrono::year_month_day date{std::chrono::sys_days(std::chrono::days(days_since_epoch))};
  return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()));
}

int TodayDays() {
  if (const char* fixed = std::getenv("CLOUDFIT_TODAY")) {
    int days = 0;
    if (ParseIsoDate(fixed, &days)) return days;
  }
  auto now = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  return static_cast<int>(now.time_since_epoch().count());
}

}  // namespace cloudfit
