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

namespace {

void AppendNormalizedName(std::string_view name, std::string* out) {
  // Sized once and written through a pointer, not a push_back per byte: ClosestNames
  // normalizes every candidate for every unknown name.
  size_t start = out->size();
  out->resize(start + name.size());
  char* next = out->data() + start;
  for (char c : name) {
    if (c == ' ' || c == '-' || c == '_' || c == '.' || c == '\t') continue;
    *next++ = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  out->resize(static_cast<size_t>(next - out->data()));
}

}  // namespace

std::string NormalizeName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  AppendNormalizedName(name, &out);
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
  // Two rows of the table, on the stack for names of ordinary length: suggestions are made
  // for every unknown name, and the fuzz harnesses make millions.
  constexpr size_t kStackColumns = 128;
  size_t stack_rows[2][kStackColumns + 1];
  std::vector<size_t> heap_rows;
  size_t* previous = stack_rows[0];
  size_t* current = stack_rows[1];
  if (b.size() > kStackColumns) {
    heap_rows.resize(2 * (b.size() + 1));
    previous = heap_rows.data();
    current = previous + b.size() + 1;
  }
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    size_t row_min = current[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      size_t cell = std::min(std::min(previous[j], current[j - 1]) + 1, substitution);
      current[j] = cell;
      row_min = std::min(row_min, cell);
    }
    if (row_min > at_most) return row_min;
    std::swap(previous, current);
  }
  return previous[b.size()];
}

// A lower bound of the edit distance of a name whose byte counts are `key_counts` (`key_size`
// bytes) and `name`: every byte one has more of than the other needs an edit of its own, and an
// edit mends at most one surplus on each side.
size_t BagDistance(const int (&key_counts)[256], size_t key_size, std::string_view name) {
  int counts[256];
  std::copy(std::begin(key_counts), std::end(key_counts), std::begin(counts));
  size_t key_surplus = key_size;  // bytes of the key not matched by a byte of the name
  size_t name_surplus = 0;
  for (char c : name) {
    int& left = counts[static_cast<unsigned char>(c)];
    if (left > 0) {
      --left;
      --key_surplus;
    } else {
      ++name_surplus;
    }
  }
  return std::max(key_surplus, name_surplus);
}

}  // namespace

size_t EditDistance(std::string_view a, std::string_view b) {
  return EditDistanceAtMost(a, b, std::numeric_limits<size_t>::max());
}

std::vector<std::string> ClosestNames(std::string_view query,
                                      const std::vector<std::string>& candidates, size_t limit) {
  std::string key = NormalizeName(query);
  size_t max_distance = std::max<size_t>(2, key.size() / 2);
  // Counts of each byte of the key: a name needs at least as many edits as the bytes one of the
  // two has and the other lacks (the larger side), which rules most names out before the table.
  int key_counts[256] = {};
  for (char c : key) ++key_counts[static_cast<unsigned char>(c)];
  std::multimap<size_t, std::string> ranked;
  std::string normalized;  // reused: one allocation for all the candidates
  for (const std::string& candidate : candidates) {
    normalized.clear();
    AppendNormalizedName(candidate, &normalized);
    size_t distance = max_distance + 1;
    // A query contained in a longer name ("a100" in "a10080gb") is a near miss too.
    if (!key.empty() && normalized.find(key) != std::string::npos) {
      distance = normalized.size() == key.size() ? 0 : 1;
    } else if (BagDistance(key_counts, key.size(), normalized) <= max_distance) {
      distance = EditDistanceAtMost(key, normalized, max_distance);
    }
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
