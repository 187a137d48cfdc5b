// The SkyPilot catalog importer: any vms.csv, for any of the clouds whose layout it knows,
// imports with a report or fails with a message naming the file; what it imports loads as a
// catalog.
#include "catalog/loaders.h"
#include "cloudfit/catalog_import.h"
#include "fuzz_support.h"
#include "util/strings.h"

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
  if (!ImportSkyPilot(fuzz::Fixture(), {path}, options, &files, &report).ok()) return 0;
  // What it imports loads as a catalog. The fixture's files loaded once, at start; an import
  // keeps them all and may change only instance files, which are parsed here against the
  // fixture as Catalog::FromFiles parses them. Reloading the whole catalog per input cost a
  // third of each execution and checked nothing that depends on the input.
  const CatalogFiles& base = fuzz::Fixture().files();
  for (const auto& [name, text] : base) {
    fuzz::Require(files.count(name) > 0, "an import keeps every file of the catalog");
  }
  for (const auto& [name, text] : files) {
    auto kept = base.find(name);
    if (kept != base.end() && kept->second == text) continue;
    fuzz::Require(StartsWith(name, "instances/") && EndsWith(name, ".csv"),
                  "an import changes only instance files");
    std::string provider = name.substr(10, name.size() - 10 - 4);
    CsvTable table;
    std::vector<InstanceType> types;
    Status s = ParseCsv(text, name, CsvOptions(), &table);
    if (s.ok()) s = ParseInstances(table, provider, fuzz::Fixture(), &types);
    fuzz::Require(s.ok(), "an imported catalog loads");
  }
  return 0;
}
