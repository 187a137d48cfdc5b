#include "estimate/communication.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cloudfit {

namespace {

std::string IntraGroup(IntraNodeLink link) {
  switch (link) {
    case IntraNodeLink::kNvlink: return "nvlink";
    case IntraNodeLink::kPciePeer:
    case IntraNodeLink::kNone: return "pcie";
    case IntraNodeLink::kPcieHost: return "host-staged";
  }
  return "pcie";
}

std::string InterGroup(Interconnect fabric) {
  switch (fabric) {
    case Interconnect::kInfiniband: return "infiniband";
    case Interconnect::kEfa: return "efa";
    case Interconnect::kRoce: return "roce";
    case Interconnect::kGpuDirectTcpx: return "gpudirect-tcpx";
    case Interconnect::kEthernet:
    case Interconnect::kUnknown: return "ethernet";
  }
  return "ethernet";
}

LinkPerformance Link(const EfficiencyTable& efficiency, const std::string& group,
                     double nominal_bytes_per_s, const std::string& name) {
  LinkPerformance l;
  l.name = name;
  l.bus_bytes_per_s = nominal_bytes_per_s * efficiency.Lookup("bus_efficiency", "*", group, 0.8);
  l.latency_s = efficiency.Lookup("collective_latency_us", "*", group, 10) * 1e-6;
  return l;
}

double RingSeconds(const LinkPerformance& link, double bytes, int ranks, double passes) {
  if (ranks <= 1 || bytes <= 0) return 0;
  double n = ranks;
  // Each pass of a ring is n - 1 steps moving bytes / n each.
  return passes * ((n - 1) * link.latency_s + (n - 1) / n * bytes / link.bus_bytes_per_s);
}

}  // namespace

CommunicationModel BuildCommunicationModel(const EfficiencyTable& efficiency,
                                           const Hardware& hw) {
  CommunicationModel c;
  c.gpus_per_node = hw.has_gpu() ? std::max(1, static_cast<int>(std::ceil(hw.gpus_per_node))) : 1;
  c.nodes = std::max(1, hw.nodes);
  c.intra = Link(efficiency, IntraGroup(hw.intra_link), hw.intra_node_bytes_per_s,
                 hw.intra_node_link.empty() ? "-" : hw.intra_node_link);
  if (hw.intra_link == IntraNodeLink::kPcieHost) {
    // NCCL through host memory: copies to and from pinned host buffers and a proxy thread, at a
    // rate the PCIe link does not set (measured runs reach a few GB/s on gen 3 and gen 4 alike).
    c.intra.bus_bytes_per_s = efficiency.Lookup("bus_bandwidth_gbps", "*", "host-staged", 5) * 1e9;
    c.intra.overlaps_compute = false;
  }
  std::string fabric = InterGroup(hw.interconnect);
  c.inter = Link(efficiency, fabric, hw.inter_node_bytes_per_s,
                 fmt::format("{} {:.0f} Gbit/s", fabric, hw.inter_node_bytes_per_s * 8 / 1e9));
  if (c.nodes > 1) {
    if (hw.inter_node_assumed) {
      c.notes.push_back(fmt::format("the network between nodes is not published: {} assumed",
                                    c.inter.name));
    }
    if (hw.interconnect == Interconnect::kUnknown) {
      c.notes.push_back("the instance's cluster fabric is unknown: collectives between nodes are "
                        "costed as TCP over Ethernet");
    }
  }
  return c;
}

double AllReduceSeconds(const CommunicationModel& comm, double bytes, int ranks) {
  if (ranks <= 1) return 0;
  int per_node = std::min(ranks, comm.gpus_per_node);
  int nodes = (ranks + per_node - 1) / per_node;
  if (nodes <= 1) return RingSeconds(comm.intra, bytes, ranks, 2);
  // Reduce-scatter inside the node, all-reduce each rank's shard between nodes (the node's
  // network shared by its ranks), all-gather inside the node.
  double inside = RingSeconds(comm.intra, bytes, per_node, 1);
  LinkPerformance shared = comm.inter;
  shared.bus_bytes_per_s /= per_node;
  double between = RingSeconds(shared, bytes / per_node, nodes, 2);
  return 2 * inside + between;
}

double AllGatherSeconds(const CommunicationModel& comm, double bytes, int ranks) {
  if (ranks <= 1) return 0;
  int per_node = std::min(ranks, comm.gpus_per_node);
  int nodes = (ranks + per_node - 1) / per_node;
  if (nodes <= 1) return RingSeconds(comm.intra, bytes, ranks, 1);
  LinkPerformance shared = comm.inter;
  shared.bus_bytes_per_s /= per_node;
  return RingSeconds(comm.intra, bytes / nodes, per_node, 1) + RingSeconds(shared, bytes, nodes, 1);
}

GradientSync DataParallelGradientSync(const CommunicationModel& comm, double gradient_bytes,
                                      int ranks, double backward_s, double bucket_bytes) {
  GradientSync g;
  if (ranks <= 1 || gradient_bytes <= 0) return g;
  g.buckets = std::max(1, static_cast<int>(std::ceil(gradient_bytes / bucket_bytes)));
  double per_bucket = AllReduceSeconds(comm, gradient_bytes / g.buckets, ranks);
  g.seconds = per_bucket * g.buckets;
  if (!comm.intra.overlaps_compute) {
    g.exposed_s = g.seconds;
    return g;
  }
  // The first bucket is ready once backward has produced its gradients; the collectives then
  // run beside the rest of backward. Whatever does not fit in that window, and at least the
  // last bucket (which has nothing left to hide behind), is exposed.
  double window = backward_s * (1 - 1.0 / g.buckets);
  g.exposed_s = std::max(per_bucket, g.seconds - window);
  return g;
}

}  // namespace cloudfit
