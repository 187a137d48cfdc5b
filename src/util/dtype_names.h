// Framework spellings of numeric formats, read as the short names cloudfit uses.
#ifndef CLOUDFIT_UTIL_DTYPE_NAMES_H_
#define CLOUDFIT_UTIL_DTYPE_NAMES_H_

#include <string>
#include <string_view>

namespace cloudfit {

// One name per numeric format, whatever the framework calls it: float32 -> fp32, float16, half,
// f16 -> fp16, bfloat16 -> bf16, float8, fp8_e4m3, fp8_e5m2 -> fp8, tensorfloat32 -> tf32;
// lower-cased; other names are returned lower-cased and unchanged.
std::string CanonicalDtypeName(std::string_view name);

}  // namespace cloudfit

#endif  // CLOUDFIT_UTIL_DTYPE_NAMES_H_
