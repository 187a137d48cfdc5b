#include "cloudfit/hardware.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "estimate/device_model.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

// PCI-SIG: gen3 8 GT/s, gen4 16, gen5 32, gen6 64, 128b/130b encoding; 16 lanes.
double PcieBytesPerSecond(int gen) {
  double gt = gen >= 6 ? 64 : gen == 5 ? 32 : gen == 4 ? 16 : 8;
  return gt * 1e9 * 16 * (128.0 / 130.0) / 8;
}

namespace {

// Whether GPUs of this kind talk over NVLink inside a node: SXM and OAM parts sit on NVLink/
// NVSwitch (or Infinity Fabric) boards. PCIe cards could pair up with a bridge, but cloud
// instances of PCIe cards (g5, NC A100 v4, gn7i) are sold without one, so they use PCIe.
bool UsesNvlink(const Accelerator& gpu, double count) {
  if (gpu.nvlink_bytes_per_s <= 0 || count < 2) return false;
  std::string form = ToLower(gpu.form_factor);
  return form.find("sxm") != std::string::npos || form.find("oam") != std::string::npos ||
         form.find("superchip") != std::string::npos;
}

// GeForce boards (RTX 3090, 4090, 5090, ...) have PCIe peer-to-peer disabled by the driver, so
// NCCL moves their traffic through host memory; data-centre and workstation boards keep it.
bool IsGeForce(const Accelerator& gpu) {
  return (StartsWith(gpu.name, "RTX-") || StartsWith(gpu.name, "GTX-")) && gpu.name.size() > 4 &&
         std::isdigit(static_cast<unsigned char>(gpu.name[4]));
}

void FillLinks(Hardware* h) {
  if (!h->has_gpu()) return;
  int gen = h->gpu->pcie_gen > 0 ? h->gpu->pcie_gen : 3;
  if (h->gpus_per_node < 2) {
    h->intra_link = IntraNodeLink::kNone;
  } else if (UsesNvlink(*h->gpu, h->gpus_per_node)) {
    h->intra_link = IntraNodeLink::kNvlink;
  } else {
    bool p2p = h->peer_to_peer.value_or(!IsGeForce(*h->gpu));
    h->intra_link = p2p ? IntraNodeLink::kPciePeer : IntraNodeLink::kPcieHost;
  }
  if (h->peer_to_peer && !*h->peer_to_peer && h->gpus_per_node >= 2) {
    h->intra_link = IntraNodeLink::kPcieHost;  // told so, even on an NVLink board
  }
  switch (h->intra_link) {
    case IntraNodeLink::kNvlink:
      h->intra_node_bytes_per_s = h->gpu->nvlink_bytes_per_s / 2;  // per direction
      h->intra_node_link = "NVLink";
      break;
    case IntraNodeLink::kPciePeer:
    case IntraNodeLink::kNone:
      h->intra_node_bytes_per_s = PcieBytesPerSecond(gen);
      h->intra_node_link = fmt::format("PCIe gen {}", gen);
      break;
    case IntraNodeLink::kPcieHost:
      h->intra_node_bytes_per_s = PcieBytesPerSecond(gen);
      h->intra_node_link = fmt::format("PCIe gen {} via host", gen);
      break;
  }
  // Between nodes: what the instance has. With only a GPU named, an HGX/DGX cluster is assumed
  // for SXM boards (one 200 Gbit/s HDR InfiniBand port per GPU, as in DGX A100) and 25 Gbit/s
  // Ethernet for PCIe cards (AWS p3.16xlarge, g5 family), and the output says so.
  double bits = 0;
  h->inter_node_assumed = false;
  if (h->network_override_bits_per_s > 0) {
    bits = h->network_override_bits_per_s;
    if (h->interconnect == Interconnect::kUnknown && !h->instance) {
      h->interconnect = h->intra_link == IntraNodeLink::kNvlink ? Interconnect::kInfiniband
                                                                : Interconnect::kEthernet;
    }
  } else if (h->instance) {
    bits = h->instance->network_bits_per_s;
    h->interconnect = h->instance->interconnect;
    if (bits <= 0) {
      bits = 10e9;
      h->inter_node_assumed = true;
    }
  } else {
    bool nvlink = h->intra_link == IntraNodeLink::kNvlink;
    bits = nvlink ? 200e9 * std::ceil(h->gpus_per_node) : 25e9;
    h->interconnect = nvlink ? Interconnect::kInfiniband : Interconnect::kEthernet;
    h->inter_node_assumed = true;
  }
  h->inter_node_bytes_per_s = bits / 8;
}

// Memory a program can allocate: in-band ECC keeps 1/16 of the memory for check bits (a T4
// reports 15,360 MiB of its 16,384; an L4 23,034 of 24,576). HBM carries ECC apart from the data
// (an A100 80GB reports 81,920 MiB).
double UsableMemoryBytes(const Accelerator& gpu) {
  return RunsInBandEcc(gpu) ? gpu.memory_bytes * 15 / 16 : gpu.memory_bytes;
}

}  // namespace

int Hardware::total_gpus() const {
  return has_gpu() ? static_cast<int>(std::ceil(gpus_per_node)) * nodes : 0;
}

Hardware HardwareForInstance(const InstanceType& instance, int nodes) {
  Hardware h;
  h.instance = &instance;
  h.gpu = instance.gpu;
  h.gpus_per_node = instance.gpu ? instance.gpu_count : 0;
  h.nodes = nodes;
  h.gpu_memory_bytes =
      instance.gpu_count > 0 ? instance.gpu_memory_bytes / std::max(1.0, instance.gpu_count) : 0;
  // A whole GPU loses the same share to in-band ECC in an instance as when named alone; a vGPU
  // slice's memory is what the profile gives.
  if (instance.gpu && instance.gpu_count >= 1 &&
      std::abs(h.gpu_memory_bytes - instance.gpu->memory_bytes) < 1e6) {
    h.gpu_memory_bytes = UsableMemoryBytes(*instance.gpu);
  }
  h.vcpus_per_node = instance.vcpus;
  h.host_memory_bytes_per_node = instance.memory_bytes;
  h.cpu = instance.cpu;
  h.name = nodes > 1 ? fmt::format("{} x{}", instance.name, nodes) : instance.name;
  FillLinks(&h);
  return h;
}

Status ResolveHardware(const Catalog& catalog, const HardwareSpec& spec, Hardware* out) {
  // NaN and infinities first (util/validate.h): every comparison below is false for NaN.
  if (Status s = CheckNumber("--gpus", spec.gpus, 0, 1e9, "GPUs"); !s.ok()) return s;
  if (Status s = CheckNumber("--network-gbps", spec.network_gbps, 0, 1e6, "Gbit/s"); !s.ok()) {
    return s;
  }
  if (spec.network_gbps < 0 || spec.network_gbps > 1e6) {
    return Status::InvalidArgument(
        fmt::format("--network-gbps: {} is not in [0, 1000000]", spec.network_gbps));
  }
  if (spec.nodes < 1 || spec.nodes > 100000) {
    return Status::InvalidArgument(fmt::format("--nodes: {} is not in [1, 100000]", spec.nodes));
  }
  if (!spec.instance.empty()) {
    const InstanceType* t = nullptr;
    Status s = catalog.FindInstance(spec.instance, &t);
    if (!s.ok()) return Status::InvalidArgument("--instance: " + s.message());
    if (!spec.gpu.empty()) {
      const Accelerator* a = nullptr;
      s = catalog.FindAccelerator(spec.gpu, &a);
      if (!s.ok()) return Status::InvalidArgument("--gpu: " + s.message());
      if (a != t->gpu) {
        return Status::InvalidArgument(fmt::format(
            "--gpu: {} has {}, not {}", t->name, t->has_gpu() ? t->gpu_name() : "no GPU", a->name));
      }
    }
    if (spec.gpus != 1 && std::abs(spec.gpus - t->gpu_count) > 1e-9) {
      return Status::InvalidArgument(fmt::format("--gpus: {} has {} GPUs, not {}", t->name,
                                                 FormatNumberShort(t->gpu_count), spec.gpus));
    }
    if (Status s = CheckDeviceCount("--nodes", t->gpu_count, spec.nodes); !s.ok()) return s;
    if (t->has_gpu() && t->gpu == nullptr) {
      return Status::InvalidArgument(fmt::format(
          "--instance: {}'s GPU model is not disclosed by {}, so it cannot be estimated", t->name,
          t->provider));
    }
    *out = HardwareForInstance(*t, spec.nodes);
    if (spec.network_gbps > 0 || spec.peer_to_peer) {
      out->network_override_bits_per_s = spec.network_gbps * 1e9;
      out->peer_to_peer = spec.peer_to_peer;
      FillLinks(out);
    }
    return Status::OK();
  }
  if (spec.gpu.empty()) {
    return Status::InvalidArgument("--gpu or --instance: name the hardware to estimate on");
  }
  const Accelerator* a = nullptr;
  Status s = catalog.FindAccelerator(spec.gpu, &a);
  if (!s.ok()) return Status::InvalidArgument("--gpu: " + s.message());
  if (spec.gpus <= 0 || spec.gpus > 1024) {
    return Status::InvalidArgument(fmt::format("--gpus: {} is not in (0, 1024]", spec.gpus));
  }
  // A fraction of a GPU is an instance type's slice (its memory and share come from the
  // catalog); named by model, GPUs are whole.
  if (spec.gpus != std::floor(spec.gpus)) {
    return Status::InvalidArgument(fmt::format(
        "--gpus: {} is not allowed; a whole number of GPUs in [1, 1024] (for a slice of a GPU, "
        "name the instance type that sells it with --instance)",
        spec.gpus));
  }
  if (Status s = CheckDeviceCount("--nodes", spec.gpus, spec.nodes); !s.ok()) return s;
  Hardware h;
  h.gpu = a;
  h.gpus_per_node = spec.gpus;
  h.nodes = spec.nodes;
  h.gpu_memory_bytes = UsableMemoryBytes(*a);
  h.network_override_bits_per_s = spec.network_gbps * 1e9;
  h.peer_to_peer = spec.peer_to_peer;
  std::string count = FormatNumberShort(spec.gpus);
  h.name = spec.nodes > 1 ? fmt::format("{} nodes x {}x {}", spec.nodes, count, a->name)
                          : fmt::format("{}x {}", count, a->name);
  FillLinks(&h);
  *out = h;
  return Status::OK();
}

}  // namespace cloudfit
