// --task FILE (a SkyPilot task's resources) and "A100:8" accelerator strings, for recommend and
// estimate. The parsing lives in the library (cloudfit/skypilot_task.h); this applies it.
#include "cli/cli_common.h"
#include "cloudfit/skypilot_task.h"

namespace cloudfit::cli {

namespace {

TaskResources LoadTask(const TaskFlags& flags) {
  TaskResources task;
  Status s = LoadSkyPilotTask(flags.file, &task);
  if (!s.ok()) throw CliError{"--task: " + s.message()};
  return task;
}

}  // namespace

void AddTaskFlag(CLI::App* command, TaskFlags* flags) {
  command->add_option("--task", flags->file,
                      "A SkyPilot task YAML: its resources (accelerators, infra or cloud and "
                      "region, use_spot, cpus, memory, instance_type) narrow the choice")
      ->check(CLI::ExistingFile)
      ->group(kGroupHardware);
}

void ApplyTaskFlags(const Catalog& catalog, const TaskFlags& flags, bool pricing_given,
                    RecommendOptions* options) {
  ThrowIfError(ApplyAcceleratorCounts(catalog, options));
  if (flags.file.empty()) return;
  TaskResources task = LoadTask(flags);
  ThrowIfError(ApplyTaskToRecommendOptions(catalog, task, options));
  if (task.use_spot && !pricing_given) {
    options->pricing = {*task.use_spot ? PricingMode::kSpot : PricingMode::kOnDemand};
  }
}

void ApplyTaskFlags(const Catalog& catalog, const TaskFlags& flags, HardwareSpec* spec) {
  if (spec->gpu.find(':') != std::string::npos) {
    AcceleratorRequest r;
    ThrowIfError(ParseAcceleratorRequest(spec->gpu, "--gpu", &r));
    if (spec->gpus != 1 && spec->gpus != r.count) {
      throw CliError{"--gpu " + spec->gpu + " and --gpus disagree on the GPU count; give one"};
    }
    spec->gpu = r.name;
    spec->gpus = r.count;
  }
  if (flags.file.empty()) return;
  TaskResources task = LoadTask(flags);
  if (!spec->gpu.empty() || !spec->instance.empty()) {
    throw CliError{"--task names the hardware; leave out --gpu and --instance, or drop --task"};
  }
  ThrowIfError(ApplyTaskToHardwareSpec(catalog, task, spec));
}

}  // namespace cloudfit::cli
