#include "util/validate.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "util/strings.h"

namespace cloudfit {

namespace {

// Length of the UTF-8 sequence starting at text[i], or 0 when it is not a valid one
// (overlong forms, surrogates and code points above U+10FFFF are invalid, per RFC 3629).
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t length = 0;
  unsigned char lowest = 0x80, highest = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    if (c == 0xE0) lowest = 0xA0;   // no overlong forms
    if (c == 0xED) highest = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    if (c == 0xF0) lowest = 0x90;
    if (c == 0xF4) highest = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < lowest || byte(i + 1) > highest) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

// "field: ", or nothing for an empty field (callers that name the field themselves).
std::string Prefix(std::string_view field) {
  return field.empty() ? std::string() : std::string(field) + ": ";
}

std::string Range(double min, double max, std::string_view unit, bool whole) {
  std::string what = whole ? "a whole number" : "a number";
  if (!unit.empty()) what += fmt::format(" of {}", unit);
  return fmt::format("{} in [{}, {}]", what, min, max);
}

Status NotAllowed(std::string_view field, std::string_view value, std::string_view allowed) {
  return Status::InvalidArgument(
      fmt::format("{}'{}' is not allowed; {}", Prefix(field), Shown(value), allowed));
}

// from_chars accepts "nan", "inf" and "infinity" in any case; name them instead of calling them
// malformed.
bool SpellsNonFinite(std::string_view text) {
  std::string t = ToLower(Trim(text));
  if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.erase(0, 1);
  return StartsWith(t, "nan") || t == "inf" || t == "infinity";
}

}  // namespace

std::string Shown(std::string_view value, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < value.size() && out.size() < max_bytes) {
    size_t n = Utf8SequenceLength(value, i);
    unsigned char c = static_cast<unsigned char>(value[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      out += '?';
      i += 1;
    } else {
      out.append(value.substr(i, n));
      i += n;
    }
  }
  if (i < value.size()) out += "...";
  return out;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

Status CheckNumber(std::string_view field, double value, double min, double max,
                   std::string_view unit) {
  if (std::isnan(value)) {
    return Status::InvalidArgument(
        fmt::format("{}NaN is not allowed; {}", Prefix(field), Range(min, max, unit, false)));
  }
  if (!std::isfinite(value) || value < min || value > max) {
    return NotAllowed(field, fmt::format("{}", value), Range(min, max, unit, false));
  }
  return Status::OK();
}

Status ParseNumber(std::string_view field, std::string_view text, double min, double max,
                   std::string_view unit, double* out) {
  double value = 0;
  if (!ParseDouble(text, &value)) {
    if (SpellsNonFinite(text)) {
      return Status::InvalidArgument(fmt::format("{}'{}' is not allowed; a finite number: {}",
                                                 Prefix(field), Shown(Trim(text)),
                                                 Range(min, max, unit, false)));
    }
    return NotAllowed(field, text, Range(min, max, unit, false));
  }
  if (value < min || value > max) return NotAllowed(field, text, Range(min, max, unit, false));
  *out = value;
  return Status::OK();
}

Status CheckWholeNumber(std::string_view field, double value, double min, double max,
                        std::string_view unit) {
  if (std::isnan(value)) {
    return Status::InvalidArgument(
        fmt::format("{}NaN is not allowed; {}", Prefix(field), Range(min, max, unit, true)));
  }
  if (!std::isfinite(value) || value < min || value > max || value != std::floor(value)) {
    return NotAllowed(field, fmt::format("{}", value), Range(min, max, unit, true));
  }
  return Status::OK();
}

Status ParseWholeNumber(std::string_view field, std::string_view text, long long min, long long max,
                        std::string_view unit, long long* out) {
  std::string_view t = Trim(text);
  auto refuse = [&] {
    return NotAllowed(field, text,
                      Range(static_cast<double>(min), static_cast<double>(max), unit, true));
  };
  long long integer = 0;
  if (ParseInt(t, &integer)) {
    if (integer < min || integer > max) return refuse();
    *out = integer;
    return Status::OK();
  }
  // "4096.0" or "4e3": whole numbers written as decimals. Compared as doubles against the
  // range first, so a value beyond long long is refused before any conversion.
  double value = 0;
  if (!ParseDouble(t, &value) || value != std::floor(value) || value < static_cast<double>(min) ||
      value > static_cast<double>(max)) {
    return refuse();
  }
  *out = static_cast<long long>(value);
  return Status::OK();
}

Status CheckName(std::string_view field, std::string_view text) {
  if (Trim(text).empty())
    return Status::InvalidArgument(fmt::format("{}empty; give a name", Prefix(field)));
  if (text.size() > kMaxNameBytes) {
    return Status::InvalidArgument(fmt::format("{}'{}' is not allowed; a name of at most {} bytes",
                                               Prefix(field), Shown(text), kMaxNameBytes));
  }
  return CheckText(field, text, kMaxNameBytes);
}

Status CheckText(std::string_view field, std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) {
    return Status::InvalidArgument(
        fmt::format("{}'{}' is not allowed; text of at most {} bytes ({} given)", Prefix(field),
                    Shown(text), max_bytes, text.size()));
  }
  // Printable ASCII and tabs, what nearly every name and note is, is UTF-8 without controls:
  // one pass instead of the decoding below (an import checks tens of thousands of names).
  bool printable_ascii = true;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    printable_ascii &= (u >= 0x20 && u < 0x7F) || c == '\t';
  }
  if (printable_ascii) return Status::OK();
  if (!IsValidUtf8(text)) {
    return Status::InvalidArgument(
        fmt::format("{}'{}' is not allowed; text must be UTF-8", Prefix(field), Shown(text)));
  }
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7F) {
      return Status::InvalidArgument(fmt::format(
          "{}'{}' is not allowed; control characters are not", Prefix(field), Shown(text)));
    }
  }
  return Status::OK();
}

int JsonNestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Status ParseJson(std::string_view field, std::string_view text, size_t max_bytes,
                 nlohmann::json* out, std::string_view malformed) {
  if (text.size() > max_bytes) {
    return Status::InvalidArgument(fmt::format("{}{} bytes of JSON; at most {} are allowed",
                                               Prefix(field), text.size(), max_bytes));
  }
  if (int depth = JsonNestingDepth(text); depth > kMaxJsonDepth) {
    return Status::InvalidArgument(
        fmt::format("{}JSON nested {} levels deep; at most {} are allowed", Prefix(field), depth,
                    kMaxJsonDepth));
  }
  // nlohmann::json checks UTF-8 only when writing; refuse bad bytes where they come in.
  if (!IsValidUtf8(text)) {
    return Status::InvalidArgument(fmt::format("{}JSON must be UTF-8 text", Prefix(field)));
  }
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // e.what() says where and why; the text is UTF-8, so the message is too.
    return Status::InvalidArgument(fmt::format("{}{}: {}", Prefix(field), malformed, e.what()));
  }
  *out = std::move(parsed);
  return Status::OK();
}

std::string DumpJson(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

Status CheckPricePerHour(std::string_view field, double price, std::string_view currency,
                         double usd_per_unit) {
  if (!(usd_per_unit > 0) || !std::isfinite(usd_per_unit)) {
    return Status::InvalidArgument(fmt::format("{}currency '{}' has no usable rate to US dollars",
                                               Prefix(field), Shown(currency)));
  }
  double min = kMinUsdPerHour / usd_per_unit, max = kMaxUsdPerHour / usd_per_unit;
  if (std::isnan(price) || !std::isfinite(price) || price < min || price > max) {
    return Status::InvalidArgument(fmt::format(
        "{}'{}' is not allowed; an hourly price in {} between {:.3g} and {:.3g} (US${} to "
        "US${} per hour); an unknown price is left empty",
        Prefix(field), price, Shown(currency), min, max, kMinUsdPerHour, kMaxUsdPerHour));
  }
  return Status::OK();
}

Status CheckDeviceCount(std::string_view field, double gpus_per_node, long long nodes) {
  double total = gpus_per_node * static_cast<double>(nodes);
  if (std::isnan(total) || total > static_cast<double>(kMaxTotalDevices)) {
    return Status::InvalidArgument(
        fmt::format("{}{} GPUs per node x {} nodes is not allowed; at most {} devices in all",
                    Prefix(field), gpus_per_node, nodes, kMaxTotalDevices));
  }
  return Status::OK();
}

Status CountToCover(std::string_view field, double demand, double per_unit, long long max,
                    std::string_view what, int* out) {
  // A hair below whole numbers counts as whole: 30 requests/s at 10 per replica is 3, not 4.
  double count = per_unit > 0 ? std::ceil(demand / per_unit - 1e-9) : HUGE_VAL;
  if (std::isnan(count) || count > static_cast<double>(max)) {
    return Status::InvalidArgument(
        fmt::format("{}{} needs more than {} {} at {:.4g} each; at most {} are planned",
                    Prefix(field), demand, max, what, per_unit, max));
  }
  *out = static_cast<int>(std::max(0.0, count));
  return Status::OK();
}

}  // namespace cloudfit
