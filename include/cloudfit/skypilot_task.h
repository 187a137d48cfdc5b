// A SkyPilot task as input: the `resources` section of a task YAML (accelerators, infra or
// cloud and region, use_spot, cpus, memory, instance_type, disk_size) and SkyPilot's "A100:8"
// accelerator strings, read into what `recommend` and `estimate` can act on.
//
// SkyPilot's task schema (sky/utils/schemas.py) is followed: keys SkyPilot accepts but that do
// not change which machine is rented (ports, labels, image_id, ...) are kept aside as ignored;
// keys SkyPilot would reject are errors naming the key.
#ifndef CLOUDFIT_SKYPILOT_TASK_H_
#define CLOUDFIT_SKYPILOT_TASK_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/status.h"

namespace cloudfit {

class Catalog;
struct Accelerator;
struct HardwareSpec;
struct InstanceType;
struct RecommendOptions;

// "A100:8" (8 per node), "H100" (1), "A10:0.5" (a fraction, as SkyPilot allows on Kubernetes).
struct AcceleratorRequest {
  std::string name;
  double count = 1;
};
// Errors name `field` and the form allowed.
Status ParseAcceleratorRequest(std::string_view text, std::string_view field,
                               AcceleratorRequest* out);

// A lower bound ("8+") or an exact figure ("8").
struct ResourceAmount {
  double value = 0;
  bool at_least = false;
  bool Admits(double have) const { return at_least ? have >= value : have == value; }
};

struct TaskResources {
  // Any one of these may be used (SkyPilot's set {A100:8, H100:8} or a list).
  std::vector<AcceleratorRequest> accelerators;
  std::string cloud;  // cloudfit's provider name ("aws", "gcp", ...); empty = any
  std::string region;
  std::string zone;
  std::optional<bool> use_spot;
  std::optional<ResourceAmount> cpus;        // vCPUs per node
  std::optional<ResourceAmount> memory_gib;  // per node
  std::string instance_type;
  std::optional<double> disk_size_gb;
  int num_nodes = 1;
  // Keys SkyPilot accepts that do not bear on the choice of machine (ports, labels, ...).
  std::vector<std::string> ignored;
};

// Reads a task's YAML text. `origin` names the file in messages.
Status ParseSkyPilotTask(std::string_view yaml_text, std::string_view origin, TaskResources* out);
Status LoadSkyPilotTask(const std::string& path, TaskResources* out);

// SkyPilot's name for a GPU ("A100-80GB" for A100-SXM4-80GB), as its catalog spells it.
std::string SkyPilotAcceleratorName(const Accelerator& gpu);
// SkyPilot's cloud name for a cloudfit provider; empty where SkyPilot has no such cloud.
std::string SkyPilotCloudName(std::string_view provider);

// Whether an instance type satisfies the task (accelerator type and count per node, vCPUs,
// memory, instance type, cloud). Accelerators are resolved through the catalog's names.
bool TaskAdmits(const Catalog& catalog, const TaskResources& task, const InstanceType& type);

// Narrows a recommendation to what the task asks for: providers, regions, spot pricing, nodes,
// and the instance types that satisfy it (intersected with any already listed). NotFound when
// no instance type of the catalog does, with the reason.
Status ApplyTaskToRecommendOptions(const Catalog& catalog, const TaskResources& task,
                                   RecommendOptions* options);

// The one hardware choice a task names, for `estimate`: its instance_type, or its accelerator
// and count. InvalidArgument when it lists several accelerators or none of either.
Status ApplyTaskToHardwareSpec(const Catalog& catalog, const TaskResources& task,
                               HardwareSpec* spec);

// recommend --gpu takes SkyPilot strings: "A100:8" keeps A100 and the instance types with 8 of
// them per node. Entries without a count are left to the recommender's own GPU filter.
Status ApplyAcceleratorCounts(const Catalog& catalog, RecommendOptions* options);

}  // namespace cloudfit

#endif  // CLOUDFIT_SKYPILOT_TASK_H_
