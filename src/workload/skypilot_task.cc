#include "cloudfit/skypilot_task.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "cloudfit/catalog.h"
#include "cloudfit/hardware.h"
#include "cloudfit/recommend.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

// SkyPilot's task schema (sky/utils/schemas.py, get_task_schema): the top-level keys a task
// may have. Only `resources` and `num_nodes` bear on the choice of machine.
const std::set<std::string>& TaskKeys() {
  static const std::set<std::string> keys = {
      "name",         "workdir", "event_callback", "num_nodes", "resources",
      "file_mounts",  "service", "setup",          "run",       "envs",
      "secrets",      "inputs",  "outputs",        "config",    "volumes",
      "experimental", "pool"};
  return keys;
}

// Keys of SkyPilot's resources schema that do not change which machine is rented.
const std::set<std::string>& IgnoredResourceKeys() {
  static const std::set<std::string> keys = {
      "job_recovery", "spot_recovery",   "volumes",  "disk_tier",      "network_tier",
      "local_disk",   "max_hourly_cost", "ports",    "labels",         "accelerator_args",
      "image_id",     "autostop",        "priority", "priority_class", "ephemeral_storage"};
  return keys;
}

// SkyPilot's accelerator names for cloudfit's canonical ones where they differ, from
// SkyPilot's catalog (skypilot-catalog v9: common/accelerators.csv and the clouds' vms.csv,
// e.g. AWS p4de.24xlarge is "A100-80GB", Lambda gpu_1x_a6000 is "A6000"). SkyPilot does not
// tell SXM from PCIe boards apart.
const std::map<std::string, std::string>& SkyPilotNames() {
  static const std::map<std::string, std::string> names = {{"P100-PCIE-16GB", "P100"},
                                                           {"P100-SXM2-16GB", "P100"},
                                                           {"V100-SXM2-16GB", "V100"},
                                                           {"V100-PCIE-16GB", "V100"},
                                                           {"V100-SXM2-32GB", "V100-32GB"},
                                                           {"V100-PCIE-32GB", "V100-32GB"},
                                                           {"A100-SXM4-40GB", "A100"},
                                                           {"A100-PCIE-40GB", "A100"},
                                                           {"A100-SXM4-80GB", "A100-80GB"},
                                                           {"A100-PCIE-80GB", "A100-80GB"},
                                                           {"H100-SXM5-80GB", "H100"},
                                                           {"H100-PCIE-80GB", "H100"},
                                                           {"H100-NVL-94GB", "H100-NVL"},
                                                           {"H200-SXM5-141GB", "H200"},
                                                           {"H200-NVL-141GB", "H200"},
                                                           {"GH200-96GB", "GH200"},
                                                           {"GH200-144GB", "GH200"},
                                                           {"RTX-A4000", "RTXA4000"},
                                                           {"RTX-A4500", "RTXA4500"},
                                                           {"RTX-A5000", "RTXA5000"},
                                                           {"RTX-A6000", "A6000"},
                                                           {"Quadro-RTX-6000", "RTX6000"},
                                                           {"RTX-3060", "RTX3060"},
                                                           {"RTX-3090", "RTX3090"},
                                                           {"RTX-4060", "RTX4060"},
                                                           {"RTX-4070", "RTX4070"},
                                                           {"RTX-4090", "RTX4090"},
                                                           {"RTX-5070", "RTX5070"},
                                                           {"RTX-5090", "RTX5090"},
                                                           {"RTX-2000-ADA", "RTX2000-Ada"},
                                                           {"RTX-4000-ADA", "RTX4000-Ada"},
                                                           {"RTX-5880-ADA", "RTX5880-Ada"},
                                                           {"RTX-6000-ADA", "RTX6000-Ada"},
                                                           {"RTX-PRO-6000-BLACKWELL", "RTXPRO6000"},
                                                           {"Radeon-Pro-V520", "Radeon Pro V520"}};
  return names;
}

// ", did you mean 'x'?" or "." to end a sentence before a list of what is allowed.
std::string EndWithSuggestion(const std::string& name, const std::vector<std::string>& names) {
  std::string suggestion = DidYouMean(ClosestNames(name, names));
  return suggestion.empty() ? "." : suggestion;
}

// Walks the documents of a YAML stream as YAML::LoadAll does, building nothing, and says
// whether the walk ends within `limit` documents. yaml-cpp 0.7 (Debian 12's) answers an empty
// document forever, consuming nothing, on some malformed text (a lone ","), so its LoadAll
// never returns and grows without bound (jbeder/yaml-cpp#1040, fixed in 0.8 by #1319). A
// stream that ends has at most one document per byte, so the limit refuses only that loop.
class DocumentWalker : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

bool DocumentsEnd(const std::string& text, size_t limit) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentWalker walker;
  for (size_t documents = 0; documents <= limit; ++documents) {
    if (!parser.HandleNextDocument(walker)) return true;
  }
  return false;
}

Status Bad(std::string_view origin, const std::string& field, const std::string& message) {
  return Status::InvalidArgument(fmt::format("{}: {}: {}", origin, field, message));
}

// "32", "32+", "32GB+", "1TB" as GiB (SkyPilot's memory and disk units are binary).
bool ParseAmount(std::string text, bool units, ResourceAmount* out) {
  text = ToLower(Trim(text));
  bool at_least = !text.empty() && text.back() == '+';
  if (at_least) text.pop_back();
  double scale = 1;
  if (units) {
    static const std::pair<const char*, double> suffixes[] = {
        {"gib", 1},  {"gb", 1},           {"g", 1},           {"tib", 1024},    {"tb", 1024},
        {"t", 1024}, {"mib", 1.0 / 1024}, {"mb", 1.0 / 1024}, {"m", 1.0 / 1024}};
    for (const auto& [suffix, factor] : suffixes) {
      if (EndsWith(text, suffix)) {
        text.resize(text.size() - std::string_view(suffix).size());
        scale = factor;
        break;
      }
    }
  }
  double v = 0;
  if (!ParseDouble(Trim(text), &v) || !std::isfinite(v) || v <= 0) return false;
  out->value = v * scale;
  out->at_least = at_least;
  return true;
}

bool NearlyEqual(double a, double b) {
  return std::fabs(a - b) <= 1e-3 * std::max(1.0, std::fabs(b));
}

Status ParseAccelerators(const YAML::Node& node, std::string_view origin,
                         std::vector<AcceleratorRequest>* out) {
  const std::string field = "resources.accelerators";
  auto add = [&](const std::string& text) {
    AcceleratorRequest r;
    Status s = ParseAcceleratorRequest(text, field, &r);
    if (!s.ok()) return Status::InvalidArgument(std::string(origin) + ": " + s.message());
    out->push_back(r);
    return Status::OK();
  };
  if (node.IsScalar()) {
    std::string text = node.Scalar();
    std::string_view t = Trim(text);
    // SkyPilot also takes a set written as one string: "{A100:8, H100:8}".
    if (!t.empty() && t.front() == '{' && t.back() == '}') t = t.substr(1, t.size() - 2);
    for (const std::string& part : SplitList(t, ',')) {
      Status s = add(part);
      if (!s.ok()) return s;
    }
  } else if (node.IsSequence()) {
    for (const YAML::Node& item : node) {
      if (!item.IsScalar())
        return Bad(origin, field, "each list item must be a string like A100:8");
      Status s = add(item.Scalar());
      if (!s.ok()) return s;
    }
  } else if (node.IsMap()) {
    // {A100: 8} or a YAML set {A100:8, H100:8} (keys with null values).
    for (const auto& item : node) {
      std::string key = item.first.Scalar();
      if (item.second.IsNull()) {
        Status s = add(key);
        if (!s.ok()) return s;
      } else if (item.second.IsScalar()) {
        Status s = add(key + ":" + item.second.Scalar());
        if (!s.ok()) return s;
      } else {
        return Bad(origin, field, "'" + key + "' must map to a count");
      }
    }
  } else {
    return Bad(origin, field, "a string like A100:8, a list of them, or a mapping {A100: 8}");
  }
  if (out->empty()) return Bad(origin, field, "empty; name at least one accelerator");
  return Status::OK();
}

Status ParseInfra(const std::string& infra, std::string_view origin, TaskResources* out) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t slash = infra.find('/', start);
    parts.emplace_back(Trim(infra.substr(start, slash - start)));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() > 3 ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    return Bad(origin, "resources.infra",
               "'" + infra + "' is not cloud[/region[/zone]] (e.g. aws/us-east-1)");
  }
  std::string cloud = ToLower(parts[0]);
  if (cloud == "k8s" || cloud == "kubernetes") {
    return Bad(origin, "resources.infra",
               "'" + infra +
                   "' is a Kubernetes cluster, whose machines are not in cloudfit's "
                   "catalog; name a cloud (aws, gcp, azure, lambda, alibaba, tencent)");
  }
  if (cloud != "*") out->cloud = cloud;
  if (parts.size() > 1 && parts[1] != "*") out->region = parts[1];
  if (parts.size() > 2 && parts[2] != "*") out->zone = parts[2];
  return Status::OK();
}

Status ParseResources(const YAML::Node& r, std::string_view origin, TaskResources* out) {
  if (!r.IsMap()) return Bad(origin, "resources", "must be a mapping of resource keys");
  static const std::set<std::string> handled = {
      "cloud",  "region",       "zone",          "infra",    "cpus",
      "memory", "accelerators", "instance_type", "use_spot", "disk_size"};
  for (const auto& item : r) {
    std::string key = item.first.Scalar();
    if (key == "any_of" || key == "ordered") {
      return Bad(origin, "resources." + key,
                 "alternative resource sets are not supported; list the accelerators as a set "
                 "instead, e.g. accelerators: {A100:8, H100:8}");
    }
    if (IgnoredResourceKeys().count(key)) {
      out->ignored.push_back(key);
    } else if (!handled.count(key)) {
      std::vector<std::string> allowed(handled.begin(), handled.end());
      return Bad(origin, "resources." + key,
                 "not a SkyPilot resources key" + EndWithSuggestion(key, allowed) +
                     " Allowed: " + Join(allowed, ", "));
    }
  }
  auto scalar = [&](const char* key, std::string* value) {
    if (!r[key]) return Status::OK();
    if (!r[key].IsScalar()) return Bad(origin, std::string("resources.") + key, "must be a string");
    *value = std::string(Trim(r[key].Scalar()));
    return Status::OK();
  };
  std::string cloud, region, zone, infra, cpus, memory, disk;
  for (Status s : {scalar("cloud", &cloud), scalar("region", &region), scalar("zone", &zone),
                   scalar("infra", &infra), scalar("cpus", &cpus), scalar("memory", &memory),
                   scalar("instance_type", &out->instance_type), scalar("disk_size", &disk)}) {
    if (!s.ok()) return s;
  }
  if (!infra.empty() && (!cloud.empty() || !region.empty() || !zone.empty())) {
    return Bad(origin, "resources.infra", "give either infra or cloud/region/zone, not both");
  }
  if (!infra.empty()) {
    Status s = ParseInfra(infra, origin, out);
    if (!s.ok()) return s;
  } else {
    out->cloud = ToLower(cloud);
    out->region = region;
    out->zone = zone;
  }
  if (r["accelerators"]) {
    Status s = ParseAccelerators(r["accelerators"], origin, &out->accelerators);
    if (!s.ok()) return s;
  }
  if (r["use_spot"]) {
    bool spot = false;
    if (!r["use_spot"].IsScalar() || !YAML::convert<bool>::decode(r["use_spot"], spot)) {
      return Bad(origin, "resources.use_spot", "must be true or false");
    }
    out->use_spot = spot;
  }
  if (!cpus.empty()) {
    ResourceAmount a;
    if (!ParseAmount(cpus, false, &a) || a.value > 100000) {
      return Bad(origin, "resources.cpus", "'" + cpus + "' is not a vCPU count like 8 or 8+");
    }
    out->cpus = a;
  }
  if (!memory.empty()) {
    ResourceAmount a;
    if (!ParseAmount(memory, true, &a) || a.value > 1e6) {
      return Bad(origin, "resources.memory",
                 "'" + memory + "' is not a size in GiB like 32, 32+ or 64GB+");
    }
    out->memory_gib = a;
  }
  if (!disk.empty()) {
    ResourceAmount a;
    if (!ParseAmount(disk, true, &a) || a.at_least || a.value < 1 || a.value > 65536) {
      return Bad(origin, "resources.disk_size",
                 "'" + disk + "' is not a disk size in GB from 1 to 65536, like 256 or 1TB");
    }
    out->disk_size_gb = std::ceil(a.value);
  }
  return Status::OK();
}

bool BaseNameMatches(const std::string& wanted, const std::string& catalog_name) {
  // cloudfit names GCP's N1 machines with attached GPUs "n1-standard-16+1xT4"; SkyPilot says
  // instance_type n1-standard-16 with accelerators T4:1.
  std::string base = catalog_name.substr(0, catalog_name.find('+'));
  return ToLower(wanted) == ToLower(catalog_name) || ToLower(wanted) == ToLower(base);
}

// Whether a GPU of the catalog is the one a request names: by SkyPilot's coarser name when the
// request uses it ("A100" covers SXM and PCIe boards of 40 GB), else exactly.
bool SameGpu(const Accelerator& wanted, std::string_view requested_name, const Accelerator* have) {
  if (have == nullptr) return false;
  if (have == &wanted) return true;
  std::string sky = SkyPilotAcceleratorName(wanted);
  return NormalizeName(requested_name) == NormalizeName(sky) &&
         SkyPilotAcceleratorName(*have) == sky;
}

}  // namespace

Status ParseAcceleratorRequest(std::string_view text, std::string_view field,
                               AcceleratorRequest* out) {
  std::string_view t = Trim(text);
  size_t colon = t.rfind(':');
  std::string name(Trim(t.substr(0, colon)));
  double count = 1;
  if (colon != std::string_view::npos) {
    std::string_view n = Trim(t.substr(colon + 1));
    if (!ParseDouble(n, &count) || !std::isfinite(count) || count <= 0 || count > 1024) {
      return Status::InvalidArgument(fmt::format(
          "{}: '{}' has no valid count; NAME:COUNT with COUNT from 0 to 1024, e.g. A100:8", field,
          Shown(text)));
    }
  }
  if (name.empty()) {
    return Status::InvalidArgument(fmt::format(
        "{}: '{}' names no accelerator; NAME[:COUNT], e.g. A100:8", field, Shown(text)));
  }
  out->name = name;
  out->count = count;
  return Status::OK();
}

Status ParseSkyPilotTask(std::string_view yaml_text, std::string_view origin, TaskResources* out) {
  *out = TaskResources();
  std::vector<YAML::Node> docs;
  try {
    std::string text(yaml_text);
    if (!DocumentsEnd(text, text.size() + 1)) {
      return Status::InvalidArgument(fmt::format(
          "{}: not valid YAML: the parser makes no progress (a stray ',' or other punctuation "
          "outside a [ ] or {{ }} list?)",
          origin));
    }
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: not valid YAML: {}", origin, e.what()));
  }
  std::erase_if(docs, [](const YAML::Node& d) { return d.IsNull(); });
  if (docs.size() != 1) {
    return Status::InvalidArgument(
        fmt::format("{}: {} YAML documents; a SkyPilot task is one (a pipeline is not supported)",
                    origin, docs.size()));
  }
  const YAML::Node& task = docs.front();
  if (!task.IsMap()) return Bad(origin, "task", "must be a mapping (name, resources, run, ...)");
  try {
    for (const auto& item : task) {
      std::string key = item.first.Scalar();
      if (!TaskKeys().count(key)) {
        std::vector<std::string> allowed(TaskKeys().begin(), TaskKeys().end());
        return Bad(origin, key,
                   "not a SkyPilot task key" + EndWithSuggestion(key, allowed) +
                       " Allowed: " + Join(allowed, ", "));
      }
    }
    if (task["num_nodes"]) {
      long long n = 0;
      if (!task["num_nodes"].IsScalar() || !ParseInt(task["num_nodes"].Scalar(), &n) || n < 1 ||
          n > 4096) {
        return Bad(origin, "num_nodes", "must be a whole number from 1 to 4096");
      }
      out->num_nodes = static_cast<int>(n);
    }
    if (task["resources"]) return ParseResources(task["resources"], origin, out);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(fmt::format("{}: {}", origin, e.what()));
  }
  return Status::OK();
}

Status LoadSkyPilotTask(const std::string& path, TaskResources* out) {
  std::string text;
  Status s = ReadFile(path, &text, kMaxDocumentBytes);  // a task file, not a data table
  if (!s.ok()) return s;
  return ParseSkyPilotTask(text, path, out);
}

std::string SkyPilotAcceleratorName(const Accelerator& gpu) {
  auto it = SkyPilotNames().find(gpu.name);
  return it != SkyPilotNames().end() ? it->second : gpu.name;
}

std::string SkyPilotCloudName(std::string_view provider) {
  // SkyPilot's clouds (sky/skylet/constants.py ALL_CLOUDS) include these four of cloudfit's
  // providers; Alibaba Cloud and Tencent Cloud are not among them.
  static const std::set<std::string, std::less<>> clouds = {"aws", "gcp", "azure", "lambda"};
  return clouds.count(provider) ? std::string(provider) : std::string();
}

bool TaskAdmits(const Catalog& catalog, const TaskResources& task, const InstanceType& type) {
  if (!task.cloud.empty() && ToLower(type.provider) != task.cloud) return false;
  if (!task.region.empty() && type.FindRegion(task.region) == nullptr) return false;
  if (!task.instance_type.empty() && !BaseNameMatches(task.instance_type, type.name)) return false;
  if (task.cpus && !(task.cpus->at_least ? type.vcpus >= task.cpus->value
                                         : NearlyEqual(type.vcpus, task.cpus->value))) {
    return false;
  }
  if (task.memory_gib &&
      !(task.memory_gib->at_least ? type.memory_gib() >= task.memory_gib->value * (1 - 1e-3)
                                  : NearlyEqual(type.memory_gib(), task.memory_gib->value))) {
    return false;
  }
  if (task.accelerators.empty()) return true;
  for (const AcceleratorRequest& r : task.accelerators) {
    const Accelerator* a = nullptr;
    if (!catalog.FindAccelerator(r.name, &a).ok()) continue;
    if (SameGpu(*a, r.name, type.gpu) && NearlyEqual(type.gpu_count, r.count)) return true;
  }
  return false;
}

namespace {

std::string Describe(const TaskResources& t) {
  std::vector<std::string> parts;
  std::vector<std::string> accelerators;
  for (const AcceleratorRequest& r : t.accelerators) {
    accelerators.push_back(r.name + ":" + FormatNumberShort(r.count));
  }
  if (!accelerators.empty()) parts.push_back("accelerators " + Join(accelerators, " or "));
  if (!t.instance_type.empty()) parts.push_back("instance_type " + t.instance_type);
  if (!t.cloud.empty()) parts.push_back("cloud " + t.cloud);
  if (!t.region.empty()) parts.push_back("region " + t.region);
  if (t.cpus)
    parts.push_back("cpus " + FormatNumberShort(t.cpus->value) + (t.cpus->at_least ? "+" : ""));
  if (t.memory_gib) {
    parts.push_back("memory " + FormatNumberShort(t.memory_gib->value) +
                    (t.memory_gib->at_least ? "+" : "") + " GiB");
  }
  return Join(parts, ", ");
}

Status CheckNames(const Catalog& catalog, const TaskResources& task) {
  for (const AcceleratorRequest& r : task.accelerators) {
    const Accelerator* a = nullptr;
    Status s = catalog.FindAccelerator(r.name, &a);
    if (!s.ok()) return Status::NotFound("resources.accelerators: " + s.message());
  }
  if (!task.cloud.empty()) {
    std::vector<std::string> providers = catalog.Providers();
    if (std::find(providers.begin(), providers.end(), task.cloud) == providers.end()) {
      return Status::NotFound(
          fmt::format("resources.cloud: '{}' has no instances in the catalog{} Clouds: {}",
                      task.cloud, EndWithSuggestion(task.cloud, providers), Join(providers, ", ")));
    }
  }
  return Status::OK();
}

}  // namespace

Status ApplyTaskToRecommendOptions(const Catalog& catalog, const TaskResources& task,
                                   RecommendOptions* o) {
  Status s = CheckNames(catalog, task);
  if (!s.ok()) return s;
  if (!task.cloud.empty()) {
    if (!o->providers.empty() &&
        std::none_of(o->providers.begin(), o->providers.end(),
                     [&](const std::string& p) { return ToLower(p) == task.cloud; })) {
      return Status::InvalidArgument("--task: cloud '" + task.cloud + "' is not among --provider " +
                                     Join(o->providers, ","));
    }
    o->providers = {task.cloud};
  }
  if (!task.region.empty()) o->regions = {task.region};
  if (task.num_nodes > 1) o->max_nodes = task.num_nodes;
  bool narrows =
      !task.accelerators.empty() || !task.instance_type.empty() || task.cpus || task.memory_gib;
  if (!narrows) return Status::OK();
  std::vector<std::string> admitted;
  for (const InstanceType& t : catalog.instances()) {
    if (!TaskAdmits(catalog, task, t)) continue;
    if (!o->instances.empty() &&
        std::none_of(o->instances.begin(), o->instances.end(),
                     [&](const std::string& n) { return ToLower(n) == ToLower(t.name); })) {
      continue;
    }
    admitted.push_back(t.name);
  }
  if (admitted.empty()) {
    return Status::NotFound(
        "--task: no instance type in the catalog has " + Describe(task) +
        (o->instances.empty() ? "" : " among --instance " + Join(o->instances, ",")));
  }
  o->instances = admitted;
  return Status::OK();
}

Status ApplyTaskToHardwareSpec(const Catalog& catalog, const TaskResources& task,
                               HardwareSpec* spec) {
  Status s = CheckNames(catalog, task);
  if (!s.ok()) return s;
  spec->nodes = task.num_nodes;
  if (!task.instance_type.empty()) {
    std::vector<std::string> matches;
    for (const InstanceType& t : catalog.instances()) {
      if (TaskAdmits(catalog, task, t)) matches.push_back(t.name);
    }
    if (matches.empty()) {
      return Status::NotFound("--task: no instance type in the catalog has " + Describe(task));
    }
    if (matches.size() > 1) {
      return Status::InvalidArgument("--task: " + Describe(task) + " matches " +
                                     Join(matches, ", ") + "; name one with --instance");
    }
    spec->instance = matches.front();
    spec->gpu.clear();
    return Status::OK();
  }
  if (task.accelerators.size() == 1) {
    spec->gpu = task.accelerators.front().name;
    spec->gpus = task.accelerators.front().count;
    return Status::OK();
  }
  if (task.accelerators.empty()) {
    return Status::InvalidArgument(
        "--task: the task names neither accelerators nor instance_type; estimate needs one");
  }
  return Status::InvalidArgument("--task: " + Describe(task) +
                                 " are alternatives; estimate takes one (recommend ranks them)");
}

Status ApplyAcceleratorCounts(const Catalog& catalog, RecommendOptions* o) {
  if (std::none_of(o->gpus.begin(), o->gpus.end(),
                   [](const std::string& g) { return g.find(':') != std::string::npos; })) {
    return Status::OK();
  }
  std::vector<AcceleratorRequest> counted;
  std::vector<const Accelerator*> any_count;
  for (const std::string& g : o->gpus) {
    AcceleratorRequest r;
    Status s = ParseAcceleratorRequest(g, "--gpu", &r);
    if (!s.ok()) return s;
    const Accelerator* a = nullptr;
    s = catalog.FindAccelerator(r.name, &a);
    if (!s.ok()) return Status::NotFound("--gpu: " + s.message());
    if (g.find(':') != std::string::npos)
      counted.push_back(r);
    else
      any_count.push_back(a);
  }
  TaskResources task;
  task.accelerators = counted;
  std::vector<std::string> admitted;
  for (const InstanceType& t : catalog.instances()) {
    bool ok = TaskAdmits(catalog, task, t) ||
              std::find(any_count.begin(), any_count.end(), t.gpu) != any_count.end();
    if (!ok) continue;
    if (!o->instances.empty() &&
        std::none_of(o->instances.begin(), o->instances.end(),
                     [&](const std::string& n) { return ToLower(n) == ToLower(t.name); })) {
      continue;
    }
    admitted.push_back(t.name);
  }
  if (admitted.empty()) {
    return Status::NotFound("--gpu: no instance type in the catalog has " + Join(o->gpus, " or ") +
                            " GPUs per node");
  }
  o->instances = admitted;
  o->gpus.clear();  // the instance list now carries both the GPU and its count
  return Status::OK();
}

}  // namespace cloudfit
