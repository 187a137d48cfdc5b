// The parser of the Python literals SkyPilot writes (GpuInfo): any bytes parse or fail, never
// crash or recurse without bound; what parses serialises to valid JSON.
#include "fuzz_support.h"
#include "util/python_literal.h"
#include "util/validate.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json value;
  if (ParsePythonLiteral(fuzz::AsText(data, size), &value).ok()) {
    fuzz::RequireJson(DumpJson(value), "a parsed literal serialises to valid JSON");
  }
  return 0;
}
