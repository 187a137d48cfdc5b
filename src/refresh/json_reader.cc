#include "refresh/json_reader.h"

#include <cmath>

#include <fmt/format.h>

#include "util/strings.h"

namespace cloudfit::refresh {

namespace {

std::string Excerpt(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 120)) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  return out;
}

}  // namespace

std::string PathIndex(std::string_view path, size_t index) {
  return fmt::format("{}[{}]", path, index);
}

std::string PathField(std::string_view path, std::string_view field) {
  return path.empty() ? std::string(field) : fmt::format("{}.{}", path, field);
}

Status JsonReader::Parse(std::string_view body, nlohmann::json* out) const {
  std::string_view trimmed = Trim(body);
  if (trimmed.empty()) {
    return Status::Corruption(fmt::format("{}: {}: empty body, expected JSON", provider_, where_));
  }
  if (trimmed.front() == '<') {
    return Status::Corruption(fmt::format(
        "{}: {}: an HTML or XML page instead of JSON (a proxy, login or error page?): {}",
        provider_, where_, Excerpt(trimmed)));
  }
  try {
    *out = nlohmann::json::parse(body);
  } catch (const nlohmann::json::parse_error& e) {
    bool cut = e.byte >= body.size();
    return Status::Corruption(fmt::format("{}: {}: {} at byte {} of {}{}", provider_, where_,
                                          cut ? "truncated JSON" : "not valid JSON", e.byte,
                                          body.size(),
                                          cut ? " (the download stopped early?)" : ""));
  }
  if (!out->is_object()) {
    return Status::Corruption(fmt::format("{}: {}: expected a JSON object, got {}", provider_,
                                          where_, out->type_name()));
  }
  return Status::OK();
}

void JsonReader::Fail(std::string_view path, std::string_view problem) {
  if (error_.empty()) error_ = fmt::format("{}: {}: {}: {}", provider_, where_, path, problem);
}

Status JsonReader::status() const {
  return error_.empty() ? Status::OK() : Status::Corruption(error_);
}

const nlohmann::json* JsonReader::Member(const nlohmann::json& object, std::string_view field,
                                         std::string_view path, std::string_view expected) {
  std::string full = PathField(path, field);
  if (!object.is_object()) {
    Fail(path, fmt::format("expected an object, got {}", object.type_name()));
    return nullptr;
  }
  auto it = object.find(std::string(field));
  if (it == object.end() || it->is_null()) {
    Fail(full, fmt::format("missing (expected {}; has the API's schema changed?)", expected));
    return nullptr;
  }
  return &*it;
}

const nlohmann::json* JsonReader::Object(const nlohmann::json& object, std::string_view field,
                                         std::string_view path) {
  const nlohmann::json* v = Member(object, field, path, "an object");
  if (v && !v->is_object()) {
    Fail(PathField(path, field), fmt::format("expected an object, got {}", v->type_name()));
    return nullptr;
  }
  return v;
}

const nlohmann::json* JsonReader::Array(const nlohmann::json& object, std::string_view field,
                                        std::string_view path) {
  const nlohmann::json* v = Member(object, field, path, "an array");
  if (v && !v->is_array()) {
    Fail(PathField(path, field), fmt::format("expected an array, got {}", v->type_name()));
    return nullptr;
  }
  return v;
}

std::optional<std::string> JsonReader::String(const nlohmann::json& object,
                                              std::string_view field, std::string_view path) {
  const nlohmann::json* v = Member(object, field, path, "a string");
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    Fail(PathField(path, field), fmt::format("expected a string, got {}", v->type_name()));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<double> JsonReader::Number(const nlohmann::json& object, std::string_view field,
                                         std::string_view path) {
  const nlohmann::json* v = Member(object, field, path, "a number");
  if (!v) return std::nullopt;
  double value = 0;
  if (v->is_number()) {
    value = v->get<double>();
  } else if (!v->is_string() || !ParseDouble(v->get<std::string>(), &value)) {
    Fail(PathField(path, field), fmt::format("expected a number, got {}", v->dump()));
    return std::nullopt;
  }
  if (!std::isfinite(value)) {
    Fail(PathField(path, field), "not a finite number");
    return std::nullopt;
  }
  return value;
}

std::optional<double> JsonReader::Price(const nlohmann::json& object, std::string_view field,
                                        std::string_view path) {
  std::optional<double> value = Number(object, field, path);
  if (value && *value <= 0) {
    Fail(PathField(path, field),
         fmt::format("{} is not a price (a price must be above 0)", FormatNumberShort(*value)));
    return std::nullopt;
  }
  return value;
}

}  // namespace cloudfit::refresh
