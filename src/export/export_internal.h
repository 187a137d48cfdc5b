// What the three writers share: quoting for YAML and HCL, the provider's names for a GPU, and
// the header of comments that says what was chosen and why.
#ifndef CLOUDFIT_EXPORT_EXPORT_INTERNAL_H_
#define CLOUDFIT_EXPORT_EXPORT_INTERNAL_H_

#include <string>
#include <string_view>

#include "cloudfit/export.h"

namespace cloudfit::export_internal {

Status WriteSkyPilot(const ExportTarget& target, std::string* out);
Status WriteTerraform(const ExportTarget& target, std::string* out);
Status WriteKubernetes(const ExportTarget& target, std::string* out);

// A YAML scalar: plain where that reads back as the same string, else double-quoted.
std::string YamlString(std::string_view text);
// An HCL string literal, with "${" and "%{" escaped so nothing is interpolated.
std::string HclString(std::string_view text);
// The summary as comment lines ("# ..."), ending with a blank line.
std::string CommentHeader(const ExportTarget& target);

// The machine type as the provider's API names it: GCP's N1 types with attached GPUs are
// "n1-standard-16+1xT4" in the catalog and "n1-standard-16" to GCP.
std::string ProviderMachineType(const InstanceType& type);
// Whether GCP attaches the GPUs itself (accelerator-optimized A2, A3, G2 machine types) or
// they are requested with the machine (N1 with guest accelerators).
bool GcpGpusBundled(const InstanceType& type);
// GCP's accelerator type ("nvidia-tesla-a100"); empty when unknown.
std::string GcpAcceleratorType(const InstanceType& type);
// The label NVIDIA's GPU feature discovery puts on nodes ("NVIDIA-A100-SXM4-80GB").
std::string GpuFeatureDiscoveryProduct(const Accelerator& gpu);
// The region the target runs in.
std::string RegionName(const ExportTarget& target);

}  // namespace cloudfit::export_internal

#endif  // CLOUDFIT_EXPORT_EXPORT_INTERNAL_H_
