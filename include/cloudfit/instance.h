// A cloud instance type and its prices per region.
#ifndef CLOUDFIT_INSTANCE_H_
#define CLOUDFIT_INSTANCE_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/accelerator.h"
#include "cloudfit/cpu.h"
#include "cloudfit/shared_text.h"

namespace cloudfit {

enum class PricingMode { kOnDemand, kSpot, kReserved1y, kReserved3y };
inline constexpr int kPricingModeCount = 4;
// "ondemand", "spot", "reserved-1y", "reserved-3y" (the forms users type on the command line).
std::string_view PricingModeName(PricingMode mode);
// Also accepts "on-demand", "reserved_1y", "1y", "3y".
bool ParsePricingMode(std::string_view name, PricingMode* out);

// The fabric GPU-to-GPU traffic crosses between nodes of this type. Collectives across nodes
// need RDMA (InfiniBand, EFA, RoCE) or GCP's GPUDirect-TCPX to run near the link rate; plain
// Ethernet goes through the host's TCP stack.
enum class Interconnect { kUnknown, kEthernet, kEfa, kInfiniband, kRoce, kGpuDirectTcpx };
// "", "ethernet", "efa", "infiniband", "roce", "gpudirect-tcpx" (the data files' spelling).
std::string_view InterconnectName(Interconnect interconnect);
// Accepts the names above, "ib" and "tcpx"; the empty string is kUnknown.
bool ParseInterconnect(std::string_view name, Interconnect* out);

struct RegionPrice {
  std::string region;
  // Per hour in `currency`; nullopt when the price is not known. Never 0 for unknown.
  std::array<std::optional<double>, kPricingModeCount> per_hour;
  std::string currency;
  // The price's own date (its publication or fetch day), days since 1970-01-01; 0 when the
  // source gives none. An unknown date counts as stale wherever age matters.
  int as_of_days = 0;
  SharedText source;
  SharedText notes;
  // Bit (1 << mode) set where that mode's price is not a quote for `region` but the type's
  // lowest price over all the provider's regions, placed on this row because the source does not
  // say which region it is from (Spare Cores' Alibaba minimum): a lower bound here.
  unsigned lowest_over_regions_modes = 0;

  std::optional<double> price(PricingMode mode) const { return per_hour[static_cast<int>(mode)]; }
  bool any_price() const;
  bool as_of_known() const { return as_of_days > 0; }
  bool lowest_over_regions(PricingMode mode) const {
    return (lowest_over_regions_modes >> static_cast<int>(mode)) & 1u;
  }
  // The mode's price is now this region's own: its lower-bound mark no longer applies.
  void MarkRegional(PricingMode mode) {
    lowest_over_regions_modes &= ~(1u << static_cast<int>(mode));
  }
};

// Whose price a row's `mode` price is: "region" (a quote for the row's region) or
// "lowest_over_regions" (the type's lowest over all the provider's regions: a lower bound there).
std::string_view PriceScopeName(const RegionPrice& price, PricingMode mode);

struct InstanceType {
  std::string provider;
  std::string name;
  std::string family;
  // nullptr for CPU-only types, and for GPUs whose model the provider does not disclose.
  const Accelerator* gpu = nullptr;
  double gpu_count = 0;         // fractional for vGPU slices
  double gpu_memory_bytes = 0;  // total GPU memory the instance sees
  int vcpus = 0;
  double memory_bytes = 0;
  const CpuGeneration* cpu = nullptr;  // nullptr when unknown
  std::string cpu_name;                // as the data file gives it
  std::string arch;
  double network_bits_per_s = 0;  // to other nodes, over `interconnect`
  Interconnect interconnect = Interconnect::kUnknown;
  double local_disk_bytes = 0;
  std::string local_disk_type;
  std::vector<RegionPrice> regions;
  SharedText source;        // the file:line that defined the shape
  SharedText shape_source;  // where the shape figures come from (URL)

  bool has_gpu() const { return gpu_count > 0; }
  // The GPU's name, or "undisclosed" when the provider masks it.
  std::string gpu_name() const { return gpu ? gpu->name : has_gpu() ? "undisclosed" : ""; }
  double memory_gib() const { return memory_bytes / (1024.0 * 1024 * 1024); }
  double gpu_memory_gib() const { return gpu_memory_bytes / (1024.0 * 1024 * 1024); }
  const RegionPrice* FindRegion(std::string_view region) const;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_INSTANCE_H_
