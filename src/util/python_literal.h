// Parses the Python literals that SkyPilot writes into its CSVs (GpuInfo is a repr() of a dict:
// single-quoted strings, True/False/None). Produces JSON values so callers can walk them.
#ifndef CLOUDFIT_UTIL_PYTHON_LITERAL_H_
#define CLOUDFIT_UTIL_PYTHON_LITERAL_H_

#include <string_view>

#include <nlohmann/json.hpp>

#include "cloudfit/status.h"

namespace cloudfit {

// Accepts dicts, lists, tuples, strings ('..' or ".." with backslash escapes), ints, floats,
// True, False and None. Nesting deeper than 64 levels is rejected.
Status ParsePythonLiteral(std::string_view text, nlohmann::json* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_PYTHON_LITERAL_H_
