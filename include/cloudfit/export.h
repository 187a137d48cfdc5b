// Export: a chosen machine (a ranked candidate of a recommendation, or an instance type, region
// and pricing mode named directly) written out as what launches it: a SkyPilot task YAML,
// Terraform for the provider's official Terraform provider, or Kubernetes manifests (a Job for
// jobs, a Deployment with a Service and a HorizontalPodAutoscaler for serving).
//
// The outputs are complete and valid documents of their format; the parts only the user can
// know (the container image, the commands, an SSH key, a project id) are placeholders or
// Terraform variables, and every assumption is written beside it as a comment.
#ifndef CLOUDFIT_EXPORT_H_
#define CLOUDFIT_EXPORT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/recommend.h"

namespace cloudfit {

enum class ExportFormat { kSkyPilot, kTerraform, kKubernetes };
bool ParseExportFormat(std::string_view name, ExportFormat* out);  // skypilot, terraform, kubernetes
std::string_view ExportFormatName(ExportFormat format);

struct ExportTarget {
  const InstanceType* instance = nullptr;
  const RegionPrice* region = nullptr;
  PricingMode mode = PricingMode::kOnDemand;
  int nodes = 1;
  // Serving: a long-running service behind a load balancer, with replicas and autoscaling.
  bool serving = false;
  int replicas = 1;
  std::optional<AutoscalingPolicy> autoscaling;
  std::optional<double> requests_per_s_per_replica;  // what one replica sustains
  int port = 8000;     // the serving container's port
  int disk_gb = 256;   // boot disk (SkyPilot's default size)
  std::string name;    // resource names: lower-case letters, digits and '-', at most 63
  // Lines written as comments at the top: what was chosen and why (time, cost, source).
  std::vector<std::string> summary;
  // SkyPilot only: a task YAML whose resources and num_nodes are replaced, keeping its name,
  // setup, run, envs, file_mounts and the rest.
  std::string base_task_yaml;
};

// From a feasible candidate of a recommendation for `workload`; prices in `currency`.
ExportTarget ExportTargetFromCandidate(const Workload& workload, const Candidate& candidate,
                                       const std::string& currency);

// From an instance type, a region of it (empty: its first priced region) and a pricing mode.
// Errors name the field: an unknown instance or a region the catalog does not list for it.
Status ExportTargetForInstance(const Catalog& catalog, const std::string& instance,
                               const std::string& region, PricingMode mode, ExportTarget* out);

// Writes the target in `format`. InvalidArgument where the format cannot express the target:
// SkyPilot has no Alibaba or Tencent cloud, Lambda Cloud has no official Terraform provider,
// Kubernetes requests whole GPUs.
Status Export(const ExportTarget& target, ExportFormat format, std::string* out);

// A name Kubernetes and the clouds accept (RFC 1123 label): "Llama-3.1 8B" -> "llama-3-1-8b".
std::string ResourceName(std::string_view text);

}  // namespace cloudfit

#endif  // CLOUDFIT_EXPORT_H_
