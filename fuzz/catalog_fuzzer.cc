// Every catalog loader: one file of a small catalog is replaced by the input (the first byte
// picks which, optional tables included); the catalog loads or fails naming file, line and
// field. A catalog that loads answers lookups and summaries.
#include "cloudfit/catalog_info.h"
#include "fuzz_support.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* kFiles[] = {"accelerators.csv", "cpus.csv",      "currency.csv",
                                 "models.csv",       "efficiency.csv", "render.csv",
                                 "video_encoders.csv", "spot.csv",    "discounts.csv",
                                 "instances/aws.csv", "instances/gcp.csv", "instances/new.csv"};
  constexpr size_t kCount = sizeof(kFiles) / sizeof(kFiles[0]);
  CatalogFiles files = fuzz::FixtureFiles();
  files[kFiles[data[0] % kCount]] = std::string(fuzz::AsText(data + 1, size - 1));
  Catalog catalog;
  if (!Catalog::FromFiles(std::move(files), "fuzz", &catalog).ok()) return 0;
  const Accelerator* gpu = nullptr;
  for (const char* name : {"A100", "h100 80gb", "rtx 3090 24gb"}) (void)catalog.FindAccelerator(name, &gpu);
  CatalogSummary summary = Summarize(catalog, 20454);  // 2026-01-01
  (void)summary;
  return 0;
}
