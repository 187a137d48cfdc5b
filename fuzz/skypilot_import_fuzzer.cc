// The SkyPilot catalog importer: any vms.csv, for any of the clouds whose layout it knows,
// imports with a report or fails with a message naming the file; what it imports loads as a
// catalog.
#include "cloudfit/catalog_import.h"
#include "fuzz_support.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kClouds[] = {"aws", "gcp", "azure", "lambda", "nebius", "runpod"};
  SkyPilotImportOptions options;
  options.cloud = kClouds[data[0] % 6];
  options.as_of = "2026-01-01";
  std::string path = fuzz::ScratchFile("vms.csv", fuzz::AsText(data + 1, size - 1));
  CatalogFiles files;
  ImportReport report;
  if (ImportSkyPilot(fuzz::Fixture(), {path}, options, &files, &report).ok()) {
    Catalog loaded;
    fuzz::Require(Catalog::FromFiles(files, "imported", &loaded).ok(),
                  "an imported catalog loads");
  }
  return 0;
}
