// String helpers shared by the loaders, name resolution and the command line.
#ifndef CLOUDFIT_UTIL_STRINGS_H_
#define CLOUDFIT_UTIL_STRINGS_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cloudfit {

std::string_view Trim(std::string_view s);

// Hashes a std::string and a string_view alike: an unordered map keyed by std::string, with
// this and std::equal_to<>, is searched with a view without making a string.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};
std::string ToLower(std::string_view s);
// Whether a and b are equal but for the case of ASCII letters (ToLower(a) == ToLower(b),
// without making either).
bool EqualsIgnoringCase(std::string_view a, std::string_view b);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);
// Splits on `separator`, trims each piece and drops empty ones.
std::vector<std::string> SplitList(std::string_view s, char separator);
std::string Join(const std::vector<std::string>& parts, std::string_view separator);

// Parses the whole of `text` as a finite decimal number.
bool ParseDouble(std::string_view text, double* out);
// Parses the whole of `text` as an integer.
bool ParseInt(std::string_view text, long long* out);

// The key names are compared by: lower case, with spaces, '-', '_' and '.' removed, so
// "RTX A6000", "rtx-a6000" and "RTXA6000" meet.
std::string NormalizeName(std::string_view name);

// Levenshtein distance.
size_t EditDistance(std::string_view a, std::string_view b);

// Up to `limit` candidates closest to `query` by edit distance of their normalized forms,
// closest first; candidates further than about half the query's length are left out.
std::vector<std::string> ClosestNames(std::string_view query,
                                      const std::vector<std::string>& candidates, size_t limit = 3);

// Shortest decimal form of a number: 8 -> "8", 0.25 -> "0.25".
std::string FormatNumberShort(double value);

// ", did you mean 'a', 'b'?" or "" when there is nothing to suggest.
std::string DidYouMean(const std::vector<std::string>& suggestions);

// Escapes text for XML and SVG: the five markup characters, and drops the control characters
// XML 1.0 does not allow (except tab).
std::string XmlEscape(std::string_view text);

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_STRINGS_H_
