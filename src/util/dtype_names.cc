#include "util/dtype_names.h"

#include "util/strings.h"

namespace cloudfit {

std::string CanonicalDtypeName(std::string_view name) {
  std::string d = ToLower(Trim(name));
  if (d == "float32" || d == "f32") return "fp32";
  if (d == "float16" || d == "half" || d == "f16") return "fp16";
  if (d == "bfloat16") return "bf16";
  if (d == "float8" || d.rfind("fp8_", 0) == 0 || d.rfind("float8_", 0) == 0) return "fp8";
  if (d == "tensorfloat32") return "tf32";
  return d;
}

}  // namespace cloudfit
