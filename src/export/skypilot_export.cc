// SkyPilot task YAML (docs.skypilot.co, "YAML configuration"): resources pin the chosen
// instance type, accelerators, region and spot choice so `sky launch` provisions exactly what
// cloudfit priced. Serving plans add a SkyServe `service` section with the replica policy.
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "cloudfit/skypilot_task.h"
#include "cloudfit/table.h"
#include "export/export_internal.h"
#include "util/strings.h"

namespace cloudfit {
namespace {

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace
}  // namespace cloudfit

namespace cloudfit::export_internal {

namespace {

std::string ResourcesBlock(const ExportTarget& t) {
  const InstanceType& type = *t.instance;
  std::string infra = SkyPilotCloudName(type.provider);
  std::string region = RegionName(t);
  if (!region.empty()) {
    infra += '/';
    infra += region;
  }
  std::string out = "resources:\n";
  out += "  infra: " + YamlString(infra) + "\n";
  out += "  instance_type: " + YamlString(ProviderMachineType(type)) + "\n";
  if (type.gpu != nullptr && type.has_gpu()) {
    out += "  accelerators: " +
           YamlString(SkyPilotAcceleratorName(*type.gpu) + ":" + FormatNumberShort(type.gpu_count)) +
           "\n";
  }
  out += std::string("  use_spot: ") + (t.mode == PricingMode::kSpot ? "true" : "false") + "\n";
  out += fmt::format("  disk_size: {}\n", t.disk_gb);
  if (t.serving) out += fmt::format("  ports: {}\n", t.port);
  return out;
}

std::string ServiceBlock(const ExportTarget& t) {
  int min_replicas = t.autoscaling ? t.autoscaling->min_replicas : t.replicas;
  int max_replicas = t.autoscaling ? t.autoscaling->max_replicas : t.replicas;
  std::string out = "service:\n";
  out += "  # The path your server answers when it is ready (vLLM and TGI: /health).\n";
  out += "  readiness_probe: /health\n";
  out += "  replica_policy:\n";
  out += fmt::format("    min_replicas: {}\n", std::max(min_replicas, 0));
  out += fmt::format("    max_replicas: {}\n", std::max(max_replicas, std::max(min_replicas, 1)));
  if (t.requests_per_s_per_replica && *t.requests_per_s_per_replica > 0) {
    out += "    # What one replica sustains within the latency targets, as cloudfit predicts it.\n";
    out += "    target_qps_per_replica: " + FormatNumberShort(*t.requests_per_s_per_replica) + "\n";
  }
  return out;
}

// One top-level key of the user's task as YAML: multi-line strings (setup, run) as literal
// blocks, the rest as yaml-cpp writes them.
std::string EmitKey(const std::string& key, const YAML::Node& value) {
  if (value.IsScalar() && value.Scalar().find('\n') != std::string::npos &&
      value.Tag() != "tag:yaml.org,2002:binary") {
    std::string text = value.Scalar();
    bool clean = text.find_first_of("\t\r") == std::string::npos && text.front() != ' ';
    if (clean) {
      std::string out = key + ": |" + (text.back() == '\n' ? "" : "-") + "\n";
      for (const std::string& line : SplitLines(text)) out += line.empty() ? "\n" : "  " + line + "\n";
      return out;
    }
  }
  YAML::Emitter emitter;
  emitter << YAML::BeginMap << YAML::Key << key << YAML::Value << value << YAML::EndMap;
  return std::string(emitter.c_str()) + "\n";
}

// Replaces resources and num_nodes of the user's own task, keeping everything else in order.
Status MergeIntoTask(const ExportTarget& t, const std::string& resources_yaml, std::string* out) {
  YAML::Node task;
  try {
    task = YAML::Load(t.base_task_yaml);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("--task: not valid YAML: ") + e.what());
  }
  if (!task.IsMap()) return Status::InvalidArgument("--task: a SkyPilot task must be a mapping");
  std::string y = CommentHeader(t);
  bool wrote_resources = false;
  auto resources = [&]() {
    if (t.nodes > 1) y += fmt::format("num_nodes: {}\n", t.nodes);
    y += resources_yaml;
    wrote_resources = true;
  };
  for (const auto& item : task) {
    std::string key = item.first.Scalar();
    if (key == "num_nodes") continue;
    if (key == "resources") {
      resources();
      continue;
    }
    y += EmitKey(key, item.second);
  }
  if (!wrote_resources) resources();
  *out = y;
  return Status::OK();
}

}  // namespace

Status WriteSkyPilot(const ExportTarget& t, std::string* out) {
  std::string resources = ResourcesBlock(t);
  if (!t.base_task_yaml.empty()) return MergeIntoTask(t, resources, out);
  std::string y = CommentHeader(t);
  y += "name: " + YamlString(t.name) + "\n";
  if (t.nodes > 1) y += fmt::format("num_nodes: {}\n", t.nodes);
  y += "\n" + resources + "\n";
  y += "setup: |\n";
  y += "  # Install what your job needs, e.g.: pip install -r requirements.txt\n";
  y += "  echo \"setup: replace with your own\"\n\n";
  y += "run: |\n";
  if (t.serving) {
    y += fmt::format("  # Start your server on port {}, e.g.: vllm serve MODEL --port {}\n", t.port, t.port);
  } else if (t.nodes > 1) {
    y += "  # SkyPilot sets SKYPILOT_NODE_RANK, SKYPILOT_NODE_IPS and SKYPILOT_NUM_GPUS_PER_NODE,\n";
    y += "  # e.g. torchrun --nnodes $SKYPILOT_NUM_NODES --node_rank $SKYPILOT_NODE_RANK ...\n";
  } else {
    y += "  # Your job, e.g.: python train.py\n";
  }
  y += "  echo \"run: replace with your own\"\n";
  if (t.serving) {
    y += '\n';
    y += ServiceBlock(t);
  }
  *out = y;
  return Status::OK();
}

}  // namespace cloudfit::export_internal
