// Collectives from message sizes: each step of a ring costs the link's latency, and the bytes
// move at the bandwidth NCCL reaches on the link that binds (NVLink/NVSwitch, PCIe peer to peer,
// PCIe through host memory, then the network between nodes: InfiniBand, EFA, RoCE,
// GPUDirect-TCPX or plain Ethernet). Across nodes, collectives are hierarchical, as NCCL runs
// them: inside each node first, then between nodes on a shard, then inside again.
#ifndef CLOUDFIT_ESTIMATE_COMMUNICATION_H_
#define CLOUDFIT_ESTIMATE_COMMUNICATION_H_

#include <string>
#include <vector>

#include "cloudfit/efficiency.h"
#include "cloudfit/hardware.h"

namespace cloudfit {

struct LinkPerformance {
  std::string name;          // "NVLink", "PCIe gen 4 via host", "EFA 400 Gbit/s", ...
  double bus_bytes_per_s = 0;  // what a ring collective moves per direction per rank
  double latency_s = 0;        // per ring step
  // Whether collectives on it run beside computation. Through host memory they do not: the
  // measured multi-GPU runs on such links lose the whole transfer time (docs/estimation.md).
  bool overlaps_compute = true;
};

struct CommunicationModel {
  LinkPerformance intra;
  LinkPerformance inter;
  int gpus_per_node = 1;
  int nodes = 1;
  std::vector<std::string> notes;  // assumptions about links (no instance network published)
};

CommunicationModel BuildCommunicationModel(const EfficiencyTable& efficiency,
                                           const Hardware& hardware);

// Ring all-reduce of `bytes` (each rank's buffer) over `ranks`, which fill nodes in order.
double AllReduceSeconds(const CommunicationModel& comm, double bytes, int ranks);
// All-gather or reduce-scatter where each rank ends with (or starts from) `bytes` in total.
double AllGatherSeconds(const CommunicationModel& comm, double bytes, int ranks);

struct GradientSync {
  double seconds = 0;    // every bucket's all-reduce, back to back
  double exposed_s = 0;  // what the backward pass does not hide
  int buckets = 0;
};

// Data-parallel gradient synchronisation as PyTorch DDP, apex and Horovod run it: gradients are
// all-reduced in buckets of `bucket_bytes` as the backward pass produces them, so a bucket's
// all-reduce overlaps the backward work that follows it; only the last bucket and whatever the
// collectives take beyond the backward pass show.
GradientSync DataParallelGradientSync(const CommunicationModel& comm, double gradient_bytes,
                                      int ranks, double backward_s, double bucket_bytes);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_COMMUNICATION_H_
