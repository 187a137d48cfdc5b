// What the libFuzzer harnesses share: catalogs loaded once, a scratch file for the parsers that
// read paths, and the invariants every harness checks on what it produced.
#ifndef CLOUDFIT_FUZZ_FUZZ_SUPPORT_H_
#define CLOUDFIT_FUZZ_FUZZ_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cloudfit/catalog.h"

namespace cloudfit::fuzz {

// The built-in catalog (models, GPUs, the whole price list), loaded on first use.
const Catalog& BuiltIn();
// The small catalog of tests/fixtures/catalog, compiled into the harness: fast to rebuild, so
// importers that end by loading a whole catalog stay quick per input.
const Catalog& Fixture();
CatalogFiles FixtureFiles();

// Writes `contents` to this process's scratch file named `name` (under $TMPDIR) and returns its
// path. The same path each time: the file is overwritten.
std::string ScratchFile(const std::string& name, std::string_view contents);

// Aborts (a finding) unless `text` is one valid JSON document in valid UTF-8.
void RequireJson(std::string_view text, const char* what);

// Aborts with `what` when `condition` is false: an invariant that must hold for any input.
void Require(bool condition, const char* what);

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace cloudfit::fuzz

#endif  // CLOUDFIT_FUZZ_FUZZ_SUPPORT_H_
