// SkyPilot task input (`--task FILE`): any YAML parses or fails with a message naming the origin,
// never crashes or recurses without bound; what parses applies to a recommendation and to an
// estimate's hardware or fails with a message.
#include "cloudfit/hardware.h"
#include "cloudfit/recommend.h"
#include "cloudfit/skypilot_task.h"
#include "fuzz_support.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::AsText(data, size);
  AcceleratorRequest request;
  if (ParseAcceleratorRequest(text, "gpu", &request).ok()) {
    fuzz::Require(request.count > 0, "an accepted accelerator count is positive");
  }
  TaskResources task;
  Status parsed = ParseSkyPilotTask(text, "task.yaml", &task);
  if (!parsed.ok()) {
    fuzz::Require(!parsed.message().empty(), "a refused task says why");
    return 0;
  }
  fuzz::Require(task.num_nodes >= 1, "a task has at least one node");
  RecommendOptions options;
  (void)ApplyTaskToRecommendOptions(fuzz::Fixture(), task, &options);
  HardwareSpec spec;
  (void)ApplyTaskToHardwareSpec(fuzz::Fixture(), task, &spec);
  return 0;
}
