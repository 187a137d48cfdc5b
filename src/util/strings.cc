#include "util/strings.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

namespace cloudfit {

namespace {
// What std::isspace accepts in the "C" locale (cloudfit never sets another), without a call.
bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
}  // namespace

std::string_view Trim(std::string_view s) {
  size_t begin = 0;
  while (begin < s.size() && IsSpace(s[begin])) ++begin;
  size_t end = s.size();
  while (end > begin && IsSpace(s[end - 1])) --end;
  return s.substr(begin, end - begin);
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::string> SplitList(std::string_view s, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(separator, start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view piece = Trim(s.substr(start, end - start));
    if (!piece.empty()) out.emplace_back(piece);
    start = end + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.append(separator);
    out.append(parts[i]);
  }
  return out;
}

bool ParseDouble(std::string_view text, double* out) {
  text = Trim(text);
  if (text.empty()) return false;
  if (text.front() == '+') text.remove_prefix(1);
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) {
    return false;
  }
  *out = value;
  return true;
}

bool ParseInt(std::string_view text, long long* out) {
  text = Trim(text);
  if (text.empty()) return false;
  long long value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return false;
  *out = value;
  return true;
}

std::string NormalizeName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '.' || c == '\t') continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

namespace {

// The edit distance of a and b, or a value above `at_most` as soon as the distance is certain to
// exceed it: it is at least the difference in length, and at least the smallest entry of any
// row of the table. ClosestNames keeps only near names, and a long unknown name (256 bytes)
// against every name of the catalog cost milliseconds when each table was filled whole.
size_t EditDistanceAtMost(std::string_view a, std::string_view b, size_t at_most) {
  size_t gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > at_most) return gap;
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    size_t row_min = current[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      row_min = std::min(row_min, current[j]);
    }
    if (row_min > at_most) return row_min;
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  return EditDistanceAtMost(a, b, std::numeric_limits<size_t>::max());
}

std::vector<std::string> ClosestNames(std::string_view query,
                                      const std::vector<std::string>& candidates, size_t limit) {
  std::string key = NormalizeName(query);
  size_t max_distance = std::max<size_t>(2, key.size() / 2);
  std::multimap<size_t, std::string> ranked;
  for (const std::string& candidate : candidates) {
    std::string normalized = NormalizeName(candidate);
    size_t distance = EditDistanceAtMost(key, normalized, max_distance);
    // A query contained in a longer name ("a100" in "a10080gb") is a near miss too.
    if (!key.empty() && normalized.find(key) != std::string::npos)
      distance = std::min<size_t>(distance, 1);
    if (distance <= max_distance) ranked.emplace(distance, candidate);
  }
  std::vector<std::string> out;
  for (const auto& [distance, name] : ranked) {
    if (std::find(out.begin(), out.end(), name) != out.end()) continue;
    out.push_back(name);
    if (out.size() == limit) break;
  }
  return out;
}

std::string FormatNumberShort(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

std::string DidYouMean(const std::vector<std::string>& suggestions) {
  if (suggestions.empty()) return "";
  std::string out = "; did you mean ";
  for (size_t i = 0; i < suggestions.size(); ++i) {
    if (i > 0) out += i + 1 == suggestions.size() ? " or " : ", ";
    out += "'" + suggestions[i] + "'";
  }
  return out + "?";
}

std::string XmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t') out += c;
    }
  }
  return out;
}

}  // namespace cloudfit
