// Kubernetes manifests: a Job for training and batch work (an Indexed Job with a headless
// Service for its rendezvous when it spans nodes), or a Deployment, a Service and an
// autoscaling/v2 HorizontalPodAutoscaler for serving. Pods request whole GPUs through the
// NVIDIA device plugin (nvidia.com/gpu) and select nodes of the chosen type by the labels each
// managed Kubernetes puts on them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "export/export_internal.h"
#include "util/strings.h"

namespace cloudfit::export_internal {

namespace {

// The kubelet and system daemons reserve part of every node (allocatable < capacity), so a pod
// sized for the whole machine would never schedule. Requests ask for this share of the vCPUs and
// memory: an assumption, written beside the figures in the output.
constexpr double kCpuShare = 0.9;
constexpr double kMemoryShare = 0.85;

struct Placement {
  std::vector<std::pair<std::string, std::string>> node_selector;
  std::vector<std::string> tolerations;  // YAML flow mappings
  std::vector<std::string> notes;
};

Placement PlacementFor(const ExportTarget& t) {
  const InstanceType& type = *t.instance;
  const std::string& p = type.provider;
  bool spot = t.mode == PricingMode::kSpot;
  Placement out;
  std::string machine = ProviderMachineType(type);
  if (p == "gcp") {
    out.notes.push_back("GKE: nodes of the chosen machine type, GPUs by GKE's accelerator label");
    if (type.has_gpu() && !GcpAcceleratorType(type).empty()) {
      out.node_selector.push_back({"cloud.google.com/gke-accelerator", GcpAcceleratorType(type)});
    }
    out.node_selector.push_back({"node.kubernetes.io/instance-type", machine});
    if (spot) out.node_selector.push_back({"cloud.google.com/gke-spot", "true"});
  } else if (p == "aws") {
    out.notes.push_back("EKS: nodes of the chosen instance type");
    out.node_selector.push_back({"node.kubernetes.io/instance-type", machine});
    if (spot) out.node_selector.push_back({"eks.amazonaws.com/capacityType", "SPOT"});
  } else if (p == "azure") {
    out.notes.push_back("AKS: nodes of the chosen VM size; GPU pools are commonly tainted sku=gpu");
    out.node_selector.push_back({"node.kubernetes.io/instance-type", machine});
    if (type.has_gpu()) {
      out.tolerations.push_back("{key: sku, operator: Equal, value: gpu, effect: NoSchedule}");
    }
    if (spot) {
      out.node_selector.push_back({"kubernetes.azure.com/scalesetpriority", "spot"});
      out.tolerations.push_back(
          "{key: kubernetes.azure.com/scalesetpriority, operator: Equal, value: spot, effect: NoSchedule}");
    }
  } else if (p == "alibaba" || p == "tencent") {
    out.notes.push_back(std::string(p == "alibaba" ? "ACK" : "TKE") +
                        ": nodes of the chosen instance type");
    out.node_selector.push_back({"node.kubernetes.io/instance-type", machine});
    if (spot) out.notes.push_back("spot: put the node pool on spot instances; no standard label selects them");
  } else {
    // No managed Kubernetes of the provider's own: select GPUs by what NVIDIA's GPU feature
    // discovery (part of the GPU operator) labels nodes with.
    out.notes.push_back("any cluster running NVIDIA GPU feature discovery: nodes by GPU product and count");
    if (type.gpu != nullptr) {
      out.node_selector.push_back({"nvidia.com/gpu.product", GpuFeatureDiscoveryProduct(*type.gpu)});
      out.node_selector.push_back({"nvidia.com/gpu.count", FormatNumberShort(type.gpu_count)});
    }
  }
  if (type.has_gpu()) {
    out.tolerations.push_back("{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}");
  }
  return out;
}

std::string Labels(const ExportTarget& t, int indent) {
  std::string pad(indent, ' ');
  return pad + "app.kubernetes.io/name: " + YamlString(t.name) + "\n" + pad +
         "app.kubernetes.io/managed-by: cloudfit\n";
}

// The pod template's spec, indented by `indent`.
std::string PodSpec(const ExportTarget& t, int indent, const std::string& restart_policy,
                    const std::string& extra_env, const std::string& probes) {
  const InstanceType& type = *t.instance;
  Placement placement = PlacementFor(t);
  std::string pad(indent, ' ');
  std::string out;
  if (!restart_policy.empty()) out += pad + "restartPolicy: " + restart_policy + "\n";
  for (const std::string& note : placement.notes) out += pad + "# " + note + "\n";
  if (!placement.node_selector.empty()) {
    out += pad + "nodeSelector:\n";
    for (const auto& [key, value] : placement.node_selector) {
      out += pad + "  " + YamlString(key) + ": " + YamlString(value) + "\n";
    }
  }
  if (!placement.tolerations.empty()) {
    out += pad + "tolerations:\n";
    for (const std::string& t : placement.tolerations) out += pad + "  - " + t + "\n";
  }
  int cpu = std::max(1, static_cast<int>(std::floor(type.vcpus * kCpuShare)));
  int memory_gib = std::max(1, static_cast<int>(std::floor(type.memory_gib() * kMemoryShare)));
  int gpus = static_cast<int>(std::lround(type.gpu_count));
  out += pad + "containers:\n";
  out += pad + "  - name: main\n";
  out += pad + "    # Your image and command: placeholders.\n";
  out += pad + "    image: " + YamlString(t.serving ? "vllm/vllm-openai:latest" : "ubuntu:22.04") + "\n";
  out += pad + "    command: [\"/bin/sh\", \"-c\"]\n";
  out += pad + "    args: [" +
         YamlString(t.serving ? fmt::format("echo replace with your server on port {}; sleep infinity", t.port)
                              : std::string("echo replace with your job")) +
         "]\n";
  if (t.serving) {
    out += pad + fmt::format("    ports:\n{}      - name: http\n{}        containerPort: {}\n", pad, pad, t.port);
  }
  if (!extra_env.empty()) out += extra_env;
  out += probes;
  out += pad + fmt::format("    # {:.0f}% of the vCPUs and {:.0f}% of the memory: the rest is the node's reserve.\n",
                           100 * kCpuShare, 100 * kMemoryShare);
  out += pad + "    resources:\n";
  out += pad + fmt::format("      requests:\n{}        cpu: \"{}\"\n{}        memory: {}Gi\n", pad, cpu, pad, memory_gib);
  if (gpus > 0) {
    out += pad + fmt::format("        nvidia.com/gpu: {}\n", gpus);
    out += pad + fmt::format("      limits:\n{}        nvidia.com/gpu: {}\n", pad, gpus);
  }
  // PyTorch's data loader workers and NCCL share memory through /dev/shm, which a container
  // gets only 64 MiB of by default.
  out += pad + "    volumeMounts:\n" + pad + "      - name: dshm\n" + pad + "        mountPath: /dev/shm\n";
  out += pad + "volumes:\n" + pad + "  - name: dshm\n" + pad + "    emptyDir:\n" + pad +
         "      medium: Memory\n";
  return out;
}

std::string JobManifests(const ExportTarget& t) {
  std::string out;
  bool multi = t.nodes > 1;
  std::string env;
  if (multi) {
    // One pod per node; pod i is reachable as NAME-i.NAME through the headless Service.
    out += fmt::format(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {}\n  labels:\n{}spec:\n  clusterIP: None\n"
        "  selector:\n    job-name: {}\n  ports:\n    - name: rendezvous\n      port: 29500\n---\n",
        t.name, Labels(t, 4), t.name);
    std::string k(10, ' ');  // the container's keys
    env = k + "env:\n" +
          k + "  - name: MASTER_ADDR\n" + k + "    value: " + YamlString(t.name + "-0." + t.name) + "\n" +
          k + "  - name: MASTER_PORT\n" + k + "    value: \"29500\"\n" +
          k + "  - name: NNODES\n" + k + fmt::format("    value: \"{}\"\n", t.nodes) +
          k + "  - name: NODE_RANK\n" + k + "    valueFrom:\n" + k + "      fieldRef:\n" + k +
          "        fieldPath: metadata.annotations['batch.kubernetes.io/job-completion-index']\n";
  }
  out += "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + t.name + "\n  labels:\n" + Labels(t, 4);
  out += "spec:\n";
  // Spot nodes are reclaimed: allow more restarts before the Job counts as failed.
  out += fmt::format("  backoffLimit: {}\n", t.mode == PricingMode::kSpot ? 10 : 3);
  if (multi) {
    out += fmt::format("  completionMode: Indexed\n  completions: {}\n  parallelism: {}\n", t.nodes, t.nodes);
  }
  out += "  template:\n    metadata:\n      labels:\n" + Labels(t, 8);
  out += "    spec:\n";
  if (multi) out += "      subdomain: " + t.name + "\n";
  out += PodSpec(t, 6, multi ? "Never" : "OnFailure", env, "");
  return out;
}

std::string ServingManifests(const ExportTarget& t) {
  int min_replicas = std::max(1, t.autoscaling ? t.autoscaling->min_replicas : t.replicas);
  int max_replicas = std::max(min_replicas, t.autoscaling ? t.autoscaling->max_replicas : t.replicas);
  int replicas = std::clamp(t.replicas, min_replicas, max_replicas);
  double scale_out = t.autoscaling ? t.autoscaling->scale_out_utilisation : 0.7;
  std::string out;
  out += "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + t.name + "\n  labels:\n" + Labels(t, 4);
  out += fmt::format("spec:\n  replicas: {}\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: {}\n",
                     replicas, YamlString(t.name));
  out += "  template:\n    metadata:\n      labels:\n" + Labels(t, 8) + "    spec:\n";
  std::string p(10, ' ');  // the container's keys
  std::string probes = fmt::format(
      "{}readinessProbe:\n{}  httpGet:\n{}    path: /health\n{}    port: http\n{}  periodSeconds: 10\n"
      "{}livenessProbe:\n{}  httpGet:\n{}    path: /health\n{}    port: http\n{}  initialDelaySeconds: 600\n"
      "{}  periodSeconds: 30\n",
      p, p, p, p, p, p, p, p, p, p, p);
  out += PodSpec(t, 6, "", "", probes);
  out += "---\n";
  out += "apiVersion: v1\nkind: Service\nmetadata:\n  name: " + t.name + "\n  labels:\n" + Labels(t, 4);
  out += fmt::format("spec:\n  selector:\n    app.kubernetes.io/name: {}\n  ports:\n    - name: http\n"
                     "      port: 80\n      targetPort: http\n",
                     YamlString(t.name));
  out += "---\n";
  out += "# Scales on GPU utilisation, read from NVIDIA's DCGM exporter through a metrics adapter\n"
         "# (for example prometheus-adapter) as the per-pod metric DCGM_FI_DEV_GPU_UTIL (percent).\n";
  if (t.autoscaling) {
    out += fmt::format("# cloudfit's plan: out above {:.0f}%, in below {:.0f}% utilisation; the HPA keeps\n"
                       "# the average at the target and waits 5 minutes before scaling in.\n",
                       100 * t.autoscaling->scale_out_utilisation, 100 * t.autoscaling->scale_in_utilisation);
  }
  out += "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: " + t.name +
         "\n  labels:\n" + Labels(t, 4);
  out += fmt::format("spec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: {}\n"
                     "  minReplicas: {}\n  maxReplicas: {}\n",
                     t.name, min_replicas, max_replicas);
  out += fmt::format("  metrics:\n    - type: Pods\n      pods:\n        metric:\n          name: DCGM_FI_DEV_GPU_UTIL\n"
                     "        target:\n          type: AverageValue\n          averageValue: \"{:.0f}\"\n",
                     100 * scale_out);
  out += "  behavior:\n    scaleDown:\n      stabilizationWindowSeconds: 300\n";
  return out;
}

}  // namespace

Status WriteKubernetes(const ExportTarget& t, std::string* out) {
  std::string body = t.serving ? ServingManifests(t) : JobManifests(t);
  if (t.mode == PricingMode::kReserved1y || t.mode == PricingMode::kReserved3y) {
    body = "# Reserved pricing applies to the nodes through a reservation bought separately.\n" + body;
  }
  *out = CommentHeader(t) + body;
  return Status::OK();
}

}  // namespace cloudfit::export_internal
