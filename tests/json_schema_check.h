// A validator for the subset of JSON Schema (draft 2020-12) that docs/schemas/ uses: type (one or
// a list), enum, const, properties, required, additionalProperties (false or a schema), items,
// minItems, minimum, maximum, pattern, anyOf, and $ref to "#/$defs/NAME" or to a sibling file
// ("estimate.schema.json"). A keyword outside the subset is an error, so a schema cannot
// silently ask for more than is checked.
#ifndef CLOUDFIT_TESTS_JSON_SCHEMA_CHECK_H_
#define CLOUDFIT_TESTS_JSON_SCHEMA_CHECK_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cloudfit::testing {

// Every way `document` breaks the schema in file `schema_path`, as "/ranked/0/hours: expected
// number, got string"; empty when it conforms.
std::vector<std::string> ValidateAgainstSchemaFile(const nlohmann::json& document,
                                                   const std::string& schema_path);

// The same with a schema in memory; `directory` resolves file references.
std::vector<std::string> ValidateAgainstSchema(const nlohmann::json& document,
                                               const nlohmann::json& schema,
                                               const std::string& directory);

}  // namespace cloudfit::testing

#endif  // CLOUDFIT_TESTS_JSON_SCHEMA_CHECK_H_
