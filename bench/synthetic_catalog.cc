// Synthetic offers for the scale benchmarks (synthetic_catalog.h).
#include "synthetic_catalog.h"

#include <fmt/format.h>

#include <string>

namespace cloudfit {

CatalogFiles SyntheticOfferCatalog(int offers) {
  Catalog built_in;
  if (!Catalog::LoadBuiltIn(&built_in).ok()) return {};
  CatalogFiles files = built_in.files();
  static const char* const kGpus[] = {"H100-SXM5-80GB", "A100-SXM4-80GB", "L4", "A10G", ""};
  static const char* const kRegions[] = {
      "us-east-1",      "us-west-2", "eu-west-1",    "eu-central-1", "ap-northeast-1",
      "ap-southeast-1", "sa-east-1", "ca-central-1", "eu-north-1",   "ap-south-1"};
  std::string csv =
      "provider,instance_type,family,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,cpu,"
      "arch,network_gbps,interconnect,local_disk_gb,local_disk_type,region,ondemand,spot,"
      "reserved_1y,reserved_3y,currency,source,as_of,notes\n";
  for (int i = 0; i < offers; ++i) {
    int type = i / 10;
    const char* gpu = kGpus[type % 5];
    int gpus = *gpu ? 1 << (type % 4) : 0;
    double price = 0.5 + (type % 97) * 0.37 + (i % 10) * 0.01;
    csv += fmt::format(
        "synthetic,syn{}.{}xlarge,syn{},{},{},,{},{},Xeon Platinum 8375C,x86_64,25,ethernet,0,,"
        "{},{:.4f},{:.4f},{:.4f},{:.4f},USD,https://example.com/synthetic,2026-01-01,\n",
        type / 8, 1 << (type % 8), type / 8, gpu, gpus ? std::to_string(gpus) : "", 4 << (type % 6),
        16 << (type % 6), kRegions[i % 10], price, price * 0.4, price * 0.7, price * 0.5);
  }
  files["instances/synthetic.csv"] = std::move(csv);
  return files;
}

}  // namespace cloudfit
