// The lines of a job's bill beyond instance hours: egress, storage, start-up, minimum billing and
// licences, each with the quantities and the priced row behind it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "cloudfit/cost.h"
#include "cloudfit/table.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr double kGB = 1e9;
constexpr double kHoursPerMonth = 730;
// Asking for a VM until it runs the job's first command: scheduling, boot and the GPU driver.
// An assumption (providers publish no figure); typical launches take one to three minutes.
constexpr double kAssumedBootSeconds = 120;
// Container images every node pulls when the workload gives no image_gb (assumptions): a CUDA
// and PyTorch image for GPU instances, a Python data stack for CPU ones.
constexpr double kGpuImageBytes = 10e9;
constexpr double kCpuImageBytes = 2e9;
// Pulling and decompressing image layers runs at about this rate whatever the network (an
// assumption: layer decompression is single-threaded per layer).
constexpr double kImagePullBytesPerS = 250e6;
// Model and data downloads from the provider's object store: a few parallel streams reach about
// 1 GB/s on instances with the network for it (an assumption).
constexpr double kObjectStoreBytesPerS = 1e9;
// A network rate for instances that publish none.
constexpr double kUnknownNetworkBitsPerS = 10e9;
// Serving egress per request when none is given: about 4 bytes of UTF-8 per generated token plus
// 2 KB of HTTP and JSON framing (an assumption).
constexpr double kBytesPerOutputToken = 4;
constexpr double kBytesPerResponse = 2048;
// An ImageNet JPEG averages about 110 KB (1.28M training images in about 140 GB); text token ids
// are stored as 2-byte integers (4 bytes for vocabularies beyond 65,536).
constexpr double kBytesPerImage = 110e3;

bool Excluded(const std::vector<std::string>& excluded, const std::string& name) {
  return std::find(excluded.begin(), excluded.end(), name) != excluded.end();
}

// As Catalog::Convert from US dollars, with the rates found once; unchanged without a rate.
double Usd(const BillRows& rows, double usd) {
  if (rows.usd == nullptr || rows.target == nullptr) return usd;
  return rows.usd->ConvertTo(usd, *rows.target);
}

std::string Gb(double bytes) { return FormatNumber(bytes / kGB, bytes < 10 * kGB ? 2 : 0) + " GB"; }

// Bytes of the data set kept in storage during the job, and how that was found.
// `how` may be null: the amount alone.
double DatasetBytes(const Workload& w, std::string* how) {
  if (w.data_gb > 0) {
    if (how) *how = fmt::format("data set {} (data_gb)", Gb(w.data_gb * kGB));
    return w.data_gb * kGB;
  }
  if (w.is_training() && w.tokens > 0 && w.is_llm_like()) {
    double unique = w.epochs > 0 ? w.tokens / w.epochs : w.tokens;
    double per_token = w.model.vocab > 65536 ? 4 : 2;
    if (how)
      *how = fmt::format("data set of {} tokens x {:.0f} bytes (token ids; give data_gb)",
                         FormatNumber(unique, 0), per_token);
    return unique * per_token;
  }
  if (w.is_training() && w.dataset_samples > 0 && w.data_type == DataType::kImage) {
    if (how)
      *how = fmt::format("{} images x 110 KB (ImageNet's average JPEG; give data_gb)",
                         FormatNumber(w.dataset_samples, 0));
    return w.dataset_samples * kBytesPerImage;
  }
  if (w.kind == WorkloadKind::kRender) {
    if (how) *how = fmt::format("scene {:.1f} GiB", w.scene_memory_gib);
    return w.scene_memory_gib * 1024.0 * 1024 * 1024;
  }
  if (how) *how = "no data set size (give data_gb)";
  return 0;
}

// Gigabytes sent out over the run, and how.
double EgressGb(const CostData& costs, const Workload& w, const JobBillInput& in,
                std::string* how) {
  if (w.egress_gb) {
    if (in.with_text) *how = fmt::format("{} GB given (egress_gb)", FormatNumber(*w.egress_gb, 2));
    return *w.egress_gb;
  }
  if (w.kind == WorkloadKind::kRealtimeRender || w.kind == WorkloadKind::kCad) {
    double mbps = StreamMbps(costs, w);
    double gb = in.sessions * mbps * 1e6 / 8 * in.hours * 3600 / kGB;
    if (in.with_text)
      *how = fmt::format("{} sessions x {} Mbit/s x {} h", FormatNumber(in.sessions, 0),
                         FormatNumber(mbps, 1), FormatNumber(in.hours, 0));
    return gb;
  }
  if (w.kind == WorkloadKind::kServing) {
    double bytes = w.request_rate * in.hours * 3600 *
                   (w.output_tokens * kBytesPerOutputToken + kBytesPerResponse);
    if (in.with_text)
      *how =
          fmt::format("{} requests/s x {} h x ({} tokens x 4 B + 2 KB framing)",
                      FormatNumber(w.request_rate, 2), FormatNumber(in.hours, 0), w.output_tokens);
    return bytes / kGB;
  }
  if (in.with_text)
    *how = "nothing sent out of the cloud (give egress_gb for results, checkpoints or data)";
  return 0;
}

// The egress amount for `gb` sent out: the provider's rate, else (unknown is never free) the
// highest known rate for the destination; nullopt when no rate is known at all.
std::optional<double> EgressAmount(const BillRows& rows, double gb) {
  if (gb <= 0) return 0.0;
  const EgressPrice* price = rows.egress;
  if (price == nullptr || !price->usd_per_gb) price = rows.highest_egress;
  if (price == nullptr) return std::nullopt;
  return Usd(rows, gb * *price->usd_per_gb);
}

CostLine Egress(const CostData& costs, const BillRows& rows, const Workload& w,
                const JobBillInput& in) {
  CostLine line{"egress", 0.0, "", ""};
  std::string how;
  double gb = EgressGb(costs, w, in, &how);
  line.amount = EgressAmount(rows, gb);
  if (!in.with_text) return line;
  const std::string& provider = in.instance->provider;
  const EgressPrice* price = rows.egress;
  if (gb <= 0) {
    line.detail = how;
    return line;
  }
  if (price == nullptr || !price->usd_per_gb) {
    const EgressPrice* highest = rows.highest_egress;
    if (highest == nullptr) {
      line.detail =
          fmt::format("{} GB to the {}: no known price", FormatNumber(gb, 1), w.egress_to);
      return line;
    }
    line.detail = fmt::format(
        "{} GB ({}) x {} USD/GB to the {}: assumed, {}'s price is unknown "
        "(the highest known, {}'s)",
        FormatNumber(gb, 1), how, FormatNumber(*highest->usd_per_gb, 3), w.egress_to, provider,
        highest->provider);
    line.source = "data/costs/egress.csv: " + highest->source;
    return line;
  }
  line.detail = fmt::format(
      "{} GB ({}) x {} USD/GB to the {} ({}'s free allowance per account "
      "not counted)",
      FormatNumber(gb, 1), how, FormatNumber(*price->usd_per_gb, 3), w.egress_to, provider);
  line.source = "data/costs/egress.csv (" + price->as_of + "): " + price->source;
  return line;
}

// Bytes kept in storage over the run: the data set, the checkpoints kept and, for a service, the
// weights it serves. `how` may be null: the amount alone.
double StorageBytes(const Workload& w, const JobBillInput& in, std::string* how) {
  double bytes = DatasetBytes(w, how);
  double checkpoints = in.checkpoint_bytes * w.checkpoints_kept;
  if (checkpoints > 0 && how) {
    *how += fmt::format(" + {} checkpoints x {}", w.checkpoints_kept, Gb(in.checkpoint_bytes));
  }
  if (w.is_service() && w.model.params > 0) {
    bytes += w.model.params * 2;
    if (how) *how = fmt::format("model weights {}", Gb(w.model.params * 2));
  }
  return bytes + checkpoints;
}

// The provider's storage row, else (unknown is never free) the highest known; null when none.
const StoragePrice* StorageRow(const BillRows& rows) {
  if (rows.storage != nullptr && rows.storage->usd_per_gb_month) return rows.storage;
  return rows.highest_storage;
}

std::optional<double> StorageAmount(const BillRows& rows, double bytes, double hours) {
  if (bytes <= 0) return 0.0;
  const StoragePrice* price = StorageRow(rows);
  if (price == nullptr) return std::nullopt;
  return Usd(rows, bytes / kGB * *price->usd_per_gb_month * (hours / kHoursPerMonth));
}

CostLine Storage(const BillRows& rows, const Workload& w, const JobBillInput& in) {
  CostLine line{"storage", 0.0, "", ""};
  std::string how;
  double bytes = StorageBytes(w, in, in.with_text ? &how : nullptr);
  line.amount = StorageAmount(rows, bytes, in.hours);
  if (!in.with_text) return line;
  double months = in.hours / kHoursPerMonth;
  if (bytes <= 0) {
    line.detail = how;
    return line;
  }
  const StoragePrice* price = StorageRow(rows);
  if (price == nullptr) {
    line.detail =
        fmt::format("{} for {} h: no known storage price", Gb(bytes), FormatNumber(in.hours, 1));
    return line;
  }
  std::string assumed;
  if (price != rows.storage) {
    assumed = fmt::format(": assumed, {}'s price is unknown (the highest known, {}'s)",
                          in.instance->provider, price->provider);
  }
  line.detail = fmt::format("{} ({}) x {} USD/GB-month x {} months{}", Gb(bytes), how,
                            FormatNumber(*price->usd_per_gb_month, 3),
                            FormatNumber(months, months < 1 ? 3 : 2), assumed);
  line.source = "data/costs/storage.csv (" + price->as_of + "): " + price->source;
  return line;
}

// Nodes x start-up hours: the start-up line per unit of the node's price.
double StartupNodeHours(const JobBillInput& in) {
  double nodes = static_cast<double>(in.nodes) * in.replicas;
  return nodes * (in.startup.total_s() / 3600);
}

double StartupAmount(const JobBillInput& in) {
  return StartupNodeHours(in) * in.node_price_per_hour;
}

CostLine Startup(const JobBillInput& in) {
  CostLine line{"startup", StartupAmount(in), "", ""};
  if (!in.with_text) return line;
  double nodes = static_cast<double>(in.nodes) * in.replicas;
  line.detail = fmt::format(
      "{} node(s) x {:.1f} min (boot {:.0f} s, image {} at {} MB/s {:.0f} s, model {} {:.0f} s) "
      "x {}/h",
      FormatNumber(nodes, 0), in.startup.total_s() / 60, in.startup.boot_s,
      Gb(in.startup.image_bytes),
      FormatNumber(std::min(kImagePullBytesPerS, in.startup.network_bytes_per_s) / 1e6, 0),
      in.startup.image_s, Gb(in.startup.model_bytes), in.startup.model_s,
      FormatNumber(in.node_price_per_hour, 3));
  line.source = "assumptions: 120 s boot, 250 MB/s image pull, downloads at min(network, 1 GB/s)";
  return line;
}

// Seconds billed beyond the run on each node over all its starts, by the provider's minimum and
// increment; 0 for a commitment (billed for its term) or without a rule (per second assumed).
double BilledExtraSeconds(const BillRows& rows, const JobBillInput& in) {
  const BillingRule* rule = rows.billing;
  if (in.mode == PricingMode::kReserved1y || in.mode == PricingMode::kReserved3y ||
      rule == nullptr) {
    return 0;
  }
  double run_s = in.hours * 3600 + in.startup.total_s();
  double billed =
      std::max(rule->minimum_s, std::ceil(run_s / rule->increment_s) * rule->increment_s);
  return std::max(0.0, billed - run_s) * in.starts;
}

// Node-hours billed beyond the run: the minimum-billing line per unit of the node's price.
double BilledNodeHours(const BillRows& rows, const JobBillInput& in) {
  double nodes = static_cast<double>(in.nodes) * in.replicas;
  return nodes * BilledExtraSeconds(rows, in) / 3600;
}

double BillingAmount(const BillRows& rows, const JobBillInput& in) {
  return BilledNodeHours(rows, in) * in.node_price_per_hour;
}

CostLine Billing(const BillRows& rows, const JobBillInput& in) {
  CostLine line{"billing", 0.0, "", ""};
  if (in.mode == PricingMode::kReserved1y || in.mode == PricingMode::kReserved3y) {
    line.detail = "a commitment is billed for its whole term";
    return line;
  }
  const BillingRule* rule = rows.billing;
  if (rule == nullptr) {
    line.detail = "no billing rule for " + in.instance->provider + ": per-second assumed";
    return line;
  }
  line.amount = BillingAmount(rows, in);
  if (!in.with_text) return line;
  line.detail = fmt::format(
      "{} node(s) x {:.0f} s rounded up ({} s increments, {} s minimum per "
      "start)",
      FormatNumber(static_cast<double>(in.nodes) * in.replicas, 0), BilledExtraSeconds(rows, in),
      FormatNumber(rule->increment_s, 0), FormatNumber(rule->minimum_s, 0));
  line.source = "data/costs/billing.csv: " + rule->source;
  return line;
}

// Hours a licence is paid for: the run and its start-up.
double LicencedHours(const JobBillInput& in) { return in.hours + in.startup.total_s() / 3600; }

// The licence seats of the run: Windows Server per vCPU, RTX Virtual Workstation per CAD
// session, where the provider prices them.
struct LicenceSeats {
  const LicencePrice* windows = nullptr;
  double windows_vcpus = 0;
  const LicencePrice* rtx_vws = nullptr;
  bool any() const { return windows != nullptr || rtx_vws != nullptr; }
};

LicenceSeats SeatsOf(const BillRows& rows, const Workload& w, const JobBillInput& in) {
  LicenceSeats seats;
  if (w.uses_windows() && rows.windows != nullptr && rows.windows->usd) {
    seats.windows = rows.windows;
    seats.windows_vcpus = static_cast<double>(in.instance->vcpus) * in.nodes * in.replicas;
  }
  if (w.kind == WorkloadKind::kCad && in.instance->has_gpu() && rows.rtx_vws != nullptr &&
      rows.rtx_vws->usd) {
    seats.rtx_vws = rows.rtx_vws;
  }
  return seats;
}

double LicencesAmount(const BillRows& rows, const LicenceSeats& seats, const JobBillInput& in) {
  if (!seats.any()) return 0;
  double hours = LicencedHours(in);
  double usd = 0;
  if (seats.windows) usd += seats.windows_vcpus * hours * *seats.windows->usd;
  if (seats.rtx_vws) usd += in.sessions * hours * *seats.rtx_vws->usd;
  return Usd(rows, usd);
}

CostLine Licences(const BillRows& rows, const Workload& w, const JobBillInput& in) {
  CostLine line{"licences", 0.0, "", ""};
  LicenceSeats seats = SeatsOf(rows, w, in);
  line.amount = LicencesAmount(rows, seats, in);
  if (!in.with_text) return line;
  if (!seats.any()) {
    line.detail = "none needed (os linux" +
                  std::string(w.kind == WorkloadKind::kCad ? "" : ", no CAD seats") + ")";
    return line;
  }
  double hours = LicencedHours(in);
  std::vector<std::string> parts, sources;
  if (const LicencePrice* p = seats.windows) {
    parts.push_back(fmt::format("Windows Server {} vCPUs x {} h x {} USD",
                                FormatNumber(seats.windows_vcpus, 0), FormatNumber(hours, 1),
                                FormatNumber(*p->usd, 3)));
    sources.push_back(p->source);
  }
  if (const LicencePrice* p = seats.rtx_vws) {
    parts.push_back(
        fmt::format("RTX Virtual Workstation {} seats x {} h x {} USD{}",
                    FormatNumber(in.sessions, 0), FormatNumber(hours, 1), FormatNumber(*p->usd, 4),
                    *p->usd == 0 ? " (included by " + in.instance->provider + ")" : ""));
    sources.push_back(p->source);
  }
  line.detail = Join(parts, "; ");
  line.source = "data/costs/licences.csv: " + Join(sources, " ");
  return line;
}

}  // namespace

std::string MissingLicence(const CostData& costs, const Workload& w, const InstanceType& instance) {
  if (w.uses_windows()) {
    const LicencePrice* p = costs.FindLicence("windows-server", instance.provider);
    if (p != nullptr && !p->usd) {
      return fmt::format("{} offers no Windows (os=windows): {}", instance.provider, p->source);
    }
  }
  return "";
}

StartupTime EstimateStartup(const Workload& w, const InstanceType& instance) {
  StartupTime t;
  t.boot_s = kAssumedBootSeconds;
  double network =
      instance.network_bits_per_s > 0 ? instance.network_bits_per_s : kUnknownNetworkBitsPerS;
  t.network_bytes_per_s = network / 8;
  t.image_bytes = w.image_gb           ? *w.image_gb * kGB
                  : instance.has_gpu() ? kGpuImageBytes
                                       : kCpuImageBytes;
  t.image_s = t.image_bytes / std::min(kImagePullBytesPerS, t.network_bytes_per_s);
  if (w.model.params > 0) {
    // Published checkpoints are 16-bit; quantised serving downloads its own format.
    double bytes_per_weight = w.precision == NumericFormat::kInt8 ||
                                      w.precision == NumericFormat::kInt4 ||
                                      w.precision == NumericFormat::kFp8
                                  ? BytesPerWeight(w.precision)
                                  : 2;
    t.model_bytes = w.model.params * bytes_per_weight;
  } else if (w.kind == WorkloadKind::kRender) {
    t.model_bytes = w.scene_memory_gib * 1024.0 * 1024 * 1024;
  }
  t.model_s = t.model_bytes / std::min(kObjectStoreBytesPerS, t.network_bytes_per_s);
  return t;
}

double StreamMbps(const CostData& costs, const Workload& w) {
  if (w.stream_mbps > 0) return w.stream_mbps;
  const StreamBitrate* b = costs.FindBitrate(w.codec);
  if (b == nullptr) return 0;
  double pixel_rate = static_cast<double>(w.width) * w.height * w.fps / (1920.0 * 1080 * 60);
  return b->mbps_1080p60 * pixel_rate;
}

BillRows FindBillRows(const Catalog& catalog, const CostData& costs, const Workload& w,
                      const std::string& provider, const std::string& currency) {
  BillRows rows;
  rows.egress = costs.FindEgress(provider, w.egress_to);
  rows.highest_egress = costs.HighestEgress(w.egress_to);
  rows.storage = costs.FindStorage(provider);
  rows.highest_storage = costs.HighestStorage();
  rows.billing = costs.FindBilling(provider);
  rows.windows = costs.FindLicence("windows-server", provider);
  rows.rtx_vws = costs.FindLicence("rtx-vws", provider);
  rows.usd = catalog.FindCurrency("USD");
  rows.target = catalog.FindCurrency(currency);
  return rows;
}

void ForEachJobCostLine(const Catalog& catalog, const CostData& costs, const Workload& w,
                        const JobBillInput& in, const std::vector<std::string>& excluded,
                        const std::function<void(CostLine&&)>& visit) {
  BillRows found;
  if (in.rows == nullptr) {
    found = FindBillRows(catalog, costs, w, in.instance->provider, in.currency);
  }
  const BillRows& rows = in.rows != nullptr ? *in.rows : found;
  if (!Excluded(excluded, "egress")) visit(Egress(costs, rows, w, in));
  if (!Excluded(excluded, "storage")) visit(Storage(rows, w, in));
  if (!Excluded(excluded, "startup")) visit(Startup(in));
  if (!Excluded(excluded, "billing")) visit(Billing(rows, in));
  if (!Excluded(excluded, "licences")) visit(Licences(rows, w, in));
}

unsigned ExcludedCostLines(const std::vector<std::string>& excluded) {
  const std::vector<std::string>& names = OptionalCostLines();
  unsigned lines = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (Excluded(excluded, names[i])) lines |= 1u << i;
  }
  return lines;
}

JobCostParts JobCostPartsOf(const CostData& costs, const Workload& w, const JobBillInput& in,
                            unsigned excluded_lines) {
  const BillRows& rows = *in.rows;
  JobCostParts parts;
  parts.kept_lines = ~excluded_lines & 0x1fu;
  auto kept = [&](int line) { return (parts.kept_lines & (1u << line)) != 0; };
  if (kept(0)) {
    std::string unused;  // EgressGb words it only with text
    parts.egress = EgressAmount(rows, EgressGb(costs, w, in, &unused)).value_or(0);
  }
  if (kept(1))
    parts.storage = StorageAmount(rows, StorageBytes(w, in, nullptr), in.hours).value_or(0);
  if (kept(2)) parts.startup_node_hours = StartupNodeHours(in);
  if (kept(3)) parts.billed_node_hours = BilledNodeHours(rows, in);
  if (kept(4)) parts.licences = LicencesAmount(rows, SeatsOf(rows, w, in), in);
  return parts;
}

double AddJobCostAmounts(const JobCostParts& parts, double node_price_per_hour, double total) {
  // In bill order, as ForEachJobCostLine hands the lines out, so the totals agree to the last
  // bit; each amount is the product the line's own function makes.
  auto kept = [&](int line) { return (parts.kept_lines & (1u << line)) != 0; };
  if (kept(0)) total += parts.egress;
  if (kept(1)) total += parts.storage;
  if (kept(2)) total += parts.startup_node_hours * node_price_per_hour;
  if (kept(3)) total += parts.billed_node_hours * node_price_per_hour;
  if (kept(4)) total += parts.licences;
  return total;
}

double AddJobCostAmounts(const CostData& costs, const Workload& w, const JobBillInput& in,
                         unsigned excluded_lines, double total) {
  return AddJobCostAmounts(JobCostPartsOf(costs, w, in, excluded_lines), in.node_price_per_hour,
                           total);
}

std::vector<CostLine> JobCostLines(const Catalog& catalog, const CostData& costs, const Workload& w,
                                   const JobBillInput& in,
                                   const std::vector<std::string>& excluded) {
  std::vector<CostLine> lines;
  lines.reserve(5);
  ForEachJobCostLine(catalog, costs, w, in, excluded,
                     [&](CostLine&& line) { lines.push_back(std::move(line)); });
  return lines;
}

}  // namespace cloudfit
