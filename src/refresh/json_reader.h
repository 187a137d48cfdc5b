// Reading a provider's JSON answer field by field. The first problem (an HTML page instead of
// JSON, a truncated body, a missing or mistyped field, a price that is not above 0) becomes
// one error naming the provider, the URL and the field's path, e.g.
//   "azure: GET https://prices.azure.com/...: Items[3].retailPrice: missing (expected a number)".
#ifndef CLOUDFIT_REFRESH_JSON_READER_H_
#define CLOUDFIT_REFRESH_JSON_READER_H_

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cloudfit/status.h"

namespace cloudfit::refresh {

class JsonReader {
 public:
  JsonReader(std::string provider, std::string method_and_url)
      : provider_(std::move(provider)), where_(std::move(method_and_url)) {}

  // Parses `body`; an HTML page, an empty body or a cut-off document is a Corruption error.
  Status Parse(std::string_view body, nlohmann::json* out) const;

  // Typed access to member `field` of `object`, with `path` naming `object` in messages
  // (e.g. "Items[3]"). Each returns nothing and records the first problem.
  const nlohmann::json* Object(const nlohmann::json& object, std::string_view field,
                               std::string_view path);
  const nlohmann::json* Array(const nlohmann::json& object, std::string_view field,
                              std::string_view path);
  std::optional<std::string> String(const nlohmann::json& object, std::string_view field,
                                    std::string_view path);
  // A JSON number, or a string holding one (some APIs quote their prices).
  std::optional<double> Number(const nlohmann::json& object, std::string_view field,
                               std::string_view path);
  // A number that must be above 0: a price.
  std::optional<double> Price(const nlohmann::json& object, std::string_view field,
                              std::string_view path);

  void Fail(std::string_view path, std::string_view problem);
  bool ok() const { return error_.empty(); }
  Status status() const;

 private:
  const nlohmann::json* Member(const nlohmann::json& object, std::string_view field,
                               std::string_view path, std::string_view expected);

  std::string provider_;
  std::string where_;
  std::string error_;
};

// "a[3]" and "a.b" builders for paths.
std::string PathIndex(std::string_view path, size_t index);
std::string PathField(std::string_view path, std::string_view field);

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_JSON_READER_H_
