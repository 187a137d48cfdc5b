// The hardware a workload runs on: a GPU model and count, an instance type (optionally several
// nodes of it), or a CPU-only instance. Resolved against the catalog into the figures the
// estimator needs: peaks, memory, and the links that bind collectives.
#ifndef CLOUDFIT_HARDWARE_H_
#define CLOUDFIT_HARDWARE_H_

#include <optional>
#include <string>

#include "cloudfit/catalog.h"

namespace cloudfit {

struct HardwareSpec {
  std::string gpu;       // GPU name or alias; empty when `instance` is given
  double gpus = 1;       // GPUs per node when `gpu` is given
  std::string instance;  // instance type; fixes GPU, count, vCPUs, memory and network
  int nodes = 1;
  double network_gbps = 0;  // between nodes, per node; 0 = the instance's or a default
  // GPUs of one node exchange data directly over PCIe (peer to peer) or through host memory.
  // Unset: from the GPU (GeForce boards have peer to peer disabled; others have it).
  std::optional<bool> peer_to_peer;
};

// How GPUs of one node reach each other.
enum class IntraNodeLink {
  kNone,       // one GPU
  kNvlink,     // NVLink/NVSwitch (or AMD Infinity Fabric)
  kPciePeer,   // PCIe, peer to peer
  kPcieHost,   // PCIe through host memory (no peer to peer): every hop is two copies
};

struct Hardware {
  std::string name;  // for people: "p4d.24xlarge x2" or "8x H100-SXM5-80GB"
  const Accelerator* gpu = nullptr;       // nullptr: the workload runs on CPUs
  const InstanceType* instance = nullptr;  // nullptr when only a GPU was named
  double gpus_per_node = 0;  // fractional for a vGPU slice
  int nodes = 1;
  double gpu_memory_bytes = 0;  // per GPU (a slice's share for vGPU)
  int vcpus_per_node = 0;       // 0 when unknown (GPU named without an instance)
  double host_memory_bytes_per_node = 0;
  const CpuGeneration* cpu = nullptr;
  // Nominal per-direction bandwidth of one GPU's link inside a node, and of a node's network
  // between nodes. What collectives reach of them is the communication model's business
  // (src/estimate/communication.h).
  IntraNodeLink intra_link = IntraNodeLink::kNone;
  double intra_node_bytes_per_s = 0;
  double inter_node_bytes_per_s = 0;
  Interconnect interconnect = Interconnect::kUnknown;  // the fabric between nodes
  bool inter_node_assumed = false;  // no instance says what the network is: a default was used
  std::string intra_node_link;  // for people: "NVLink", "PCIe gen 4", "PCIe gen 4 via host"
  double network_override_bits_per_s = 0;  // from HardwareSpec::network_gbps
  std::optional<bool> peer_to_peer;        // from HardwareSpec::peer_to_peer

  int total_gpus() const;
  bool has_gpu() const { return gpu != nullptr && gpus_per_node > 0; }
};

// Checks and resolves a spec: unknown GPU or instance types, a GPU count an instance does not
// have, non-positive counts are errors naming the field.
Status ResolveHardware(const Catalog& catalog, const HardwareSpec& spec, Hardware* out);

// Nominal PCIe x16 bandwidth per direction in bytes/s for a generation (3 when unknown).
double PcieBytesPerSecond(int gen);

// Hardware for one instance type, as the recommender enumerates them.
Hardware HardwareForInstance(const InstanceType& instance, int nodes);

}  // namespace cloudfit

#endif  // CLOUDFIT_HARDWARE_H_
