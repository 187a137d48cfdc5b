// A user's price list laid over a catalog: any file imports or fails naming file:line and the
// field; a price that is not plausible for its currency is refused.
#include "cloudfit/catalog_import.h"
#include "fuzz_support.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = fuzz::ScratchFile("prices.csv", fuzz::AsText(data, size));
  CatalogFiles files;
  ImportReport report;
  if (ImportPriceList(fuzz::Fixture(), {path}, &files, &report).ok()) {
    Catalog loaded;
    fuzz::Require(Catalog::FromFiles(files, "imported", &loaded).ok(),
                  "a catalog with imported prices loads");
  }
  return 0;
}
