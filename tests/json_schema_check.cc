#include "json_schema_check.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>

namespace cloudfit::testing {

namespace {

using nlohmann::json;

struct Validator {
  std::string directory;
  std::map<std::string, json> files;  // loaded by $ref, by name
  std::vector<std::string> errors;

  const json& LoadFile(const std::string& name) {
    auto it = files.find(name);
    if (it != files.end()) return it->second;
    std::ifstream in(directory + "/" + name);
    json loaded = in ? json::parse(in, nullptr, false) : json();
    if (!in || loaded.is_discarded()) {
      errors.push_back("$ref: cannot read " + directory + "/" + name);
      loaded = json::object();
    }
    return files[name] = loaded;
  }

  static bool HasType(const json& v, const std::string& type) {
    if (type == "null") return v.is_null();
    if (type == "boolean") return v.is_boolean();
    if (type == "object") return v.is_object();
    if (type == "array") return v.is_array();
    if (type == "string") return v.is_string();
    if (type == "integer") {
      return v.is_number_integer() || v.is_number_unsigned() ||
             (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<long long>(v.get<double>())));
    }
    if (type == "number") return v.is_number();
    return false;
  }

  static std::string TypeOf(const json& v) {
    switch (v.type()) {
      case json::value_t::null: return "null";
      case json::value_t::boolean: return "boolean";
      case json::value_t::object: return "object";
      case json::value_t::array: return "array";
      case json::value_t::string: return "string";
      default: return "number";
    }
  }

  // `root` is the schema document that "#/$defs/..." refers to.
  void Check(const json& v, const json& schema, const json& root, const std::string& at) {
    static const std::set<std::string> kKnown = {
        "$schema", "$id", "$defs", "title", "description", "type", "enum", "const", "properties",
        "required", "additionalProperties", "items", "minItems", "minimum", "maximum", "pattern",
        "anyOf", "$ref", "examples"};
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) errors.push_back(at + ": not allowed here");
      return;
    }
    for (const auto& [key, _] : schema.items()) {
      if (!kKnown.count(key)) errors.push_back(at + ": schema keyword '" + key + "' is not supported");
    }
    if (schema.contains("$ref")) {
      std::string ref = schema["$ref"];
      if (ref.rfind("#/$defs/", 0) == 0) {
        std::string name = ref.substr(8);
        if (!root.contains("$defs") || !root["$defs"].contains(name)) {
          errors.push_back(at + ": $ref " + ref + " is not defined");
        } else {
          Check(v, root["$defs"][name], root, at);
        }
      } else {
        const json& file = LoadFile(ref);
        Check(v, file, file, at);
      }
    }
    if (schema.contains("type")) {
      std::vector<std::string> types = schema["type"].is_array()
                                           ? schema["type"].get<std::vector<std::string>>()
                                           : std::vector<std::string>{schema["type"]};
      bool ok = false;
      for (const std::string& t : types) ok = ok || HasType(v, t);
      if (!ok) {
        errors.push_back(at + ": expected " + schema["type"].dump() + ", got " + TypeOf(v));
        return;
      }
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const json& e : schema["enum"]) found = found || e == v;
      if (!found) errors.push_back(at + ": " + v.dump() + " is not one of " + schema["enum"].dump());
    }
    if (schema.contains("const") && schema["const"] != v) {
      errors.push_back(at + ": expected " + schema["const"].dump() + ", got " + v.dump());
    }
    if (schema.contains("anyOf")) {
      bool any = false;
      for (const json& option : schema["anyOf"]) {
        Validator sub{directory, files, {}};
        sub.Check(v, option, root, at);
        any = any || sub.errors.empty();
      }
      if (!any) errors.push_back(at + ": matches none of anyOf");
    }
    if (v.is_number()) {
      double x = v.get<double>();
      if (schema.contains("minimum") && x < schema["minimum"].get<double>()) {
        errors.push_back(at + ": " + v.dump() + " is below the minimum " + schema["minimum"].dump());
      }
      if (schema.contains("maximum") && x > schema["maximum"].get<double>()) {
        errors.push_back(at + ": " + v.dump() + " is above the maximum " + schema["maximum"].dump());
      }
    }
    if (v.is_string() && schema.contains("pattern")) {
      std::regex re(schema["pattern"].get<std::string>(), std::regex::ECMAScript);
      if (!std::regex_search(v.get<std::string>(), re)) {
        errors.push_back(at + ": " + v.dump() + " does not match " + schema["pattern"].dump());
      }
    }
    if (v.is_object()) {
      if (schema.contains("required")) {
        for (const json& name : schema["required"]) {
          if (!v.contains(name.get<std::string>())) {
            errors.push_back(at + ": required field '" + name.get<std::string>() + "' is missing");
          }
        }
      }
      const json empty = json::object();
      const json& properties = schema.contains("properties") ? schema["properties"] : empty;
      for (const auto& [key, child] : v.items()) {
        if (properties.contains(key)) {
          Check(child, properties[key], root, at + "/" + key);
        } else if (schema.contains("additionalProperties")) {
          Check(child, schema["additionalProperties"], root, at + "/" + key);
        }
      }
    }
    if (v.is_array()) {
      if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>()) {
        errors.push_back(at + ": fewer than " + schema["minItems"].dump() + " items");
      }
      if (schema.contains("items")) {
        for (size_t i = 0; i < v.size(); ++i) {
          Check(v[i], schema["items"], root, at + "/" + std::to_string(i));
        }
      }
    }
  }
};

}  // namespace

std::vector<std::string> ValidateAgainstSchema(const nlohmann::json& document,
                                               const nlohmann::json& schema,
                                               const std::string& directory) {
  Validator v{directory, {}, {}};
  v.Check(document, schema, schema, "");
  return v.errors;
}

std::vector<std::string> ValidateAgainstSchemaFile(const nlohmann::json& document,
                                                   const std::string& schema_path) {
  std::ifstream in(schema_path);
  if (!in) return {"cannot read schema " + schema_path};
  json schema = json::parse(in, nullptr, false);
  if (schema.is_discarded()) return {"schema " + schema_path + " is not valid JSON"};
  std::string directory = schema_path.substr(0, schema_path.find_last_of('/'));
  return ValidateAgainstSchema(document, schema, directory);
}

}  // namespace cloudfit::testing
