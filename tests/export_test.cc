// export: every instance type of the catalog written as a SkyPilot task, Terraform and
// Kubernetes manifests, read back by a YAML parser (yaml-cpp) and checked against what each
// format requires. tests/formats/ parses the same outputs with HashiCorp's HCL parser and the
// Kubernetes OpenAPI schema where Node.js is installed.
#include "cloudfit/export.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "cloudfit/skypilot_task.h"
#include "test_support.h"
#include "util/csv.h"
#include "util/strings.h"

namespace cloudfit {
namespace {

using testing::BuiltInCatalog;

std::string ExportOf(const InstanceType& t, ExportFormat format, PricingMode mode, int nodes = 1,
                     bool serving = false) {
  ExportTarget target;
  Status s = ExportTargetForInstance(BuiltInCatalog(), t.name, "", mode, &target);
  EXPECT_TRUE(s.ok()) << s.message();
  target.nodes = nodes;
  target.serving = serving;
  std::string out;
  s = Export(target, format, &out);
  EXPECT_TRUE(s.ok()) << t.name << ": " << s.message();
  return out;
}

bool WholeGpus(const InstanceType& t) { return t.gpu_count == static_cast<int>(t.gpu_count); }

// SkyPilot's task and resources keys (sky/utils/schemas.py).
const std::set<std::string> kTaskKeys = {"name",        "workdir", "num_nodes", "resources",
                                         "file_mounts", "service", "setup",     "run",
                                         "envs",        "secrets"};
const std::set<std::string> kResourceKeys = {
    "infra",    "cloud",     "region", "zone", "instance_type", "accelerators",
    "use_spot", "disk_size", "ports",  "cpus", "memory"};

void CheckSkyPilotSchema(const YAML::Node& task, const std::string& what) {
  ASSERT_TRUE(task.IsMap()) << what;
  for (const auto& item : task) {
    EXPECT_TRUE(kTaskKeys.count(item.first.Scalar())) << what << ": " << item.first.Scalar();
  }
  EXPECT_TRUE(task["name"].IsScalar()) << what;
  EXPECT_TRUE(task["setup"].IsScalar() && task["run"].IsScalar()) << what;
  const YAML::Node r = task["resources"];
  ASSERT_TRUE(r.IsMap()) << what;
  for (const auto& item : r) {
    EXPECT_TRUE(kResourceKeys.count(item.first.Scalar())) << what << ": " << item.first.Scalar();
  }
  static const std::regex infra(R"((aws|gcp|azure|lambda)(/[^/]+)?)");
  EXPECT_TRUE(std::regex_match(r["infra"].as<std::string>(), infra)) << what;
  EXPECT_NO_THROW(r["use_spot"].as<bool>()) << what;
  EXPECT_GT(r["disk_size"].as<int>(), 0) << what;
  if (r["accelerators"]) {
    static const std::regex accelerator(R"([A-Za-z0-9 -]+:[0-9.]+)");
    EXPECT_TRUE(std::regex_match(r["accelerators"].as<std::string>(), accelerator)) << what;
  }
  if (task["num_nodes"]) {
    EXPECT_GE(task["num_nodes"].as<int>(), 2) << what;
  }
}

TEST(ExportSkyPilotTest, EveryInstanceOfSkyPilotCloudsReadsBackAsItself) {
  const Catalog& catalog = BuiltInCatalog();
  int checked = 0;
  for (const InstanceType& t : catalog.instances()) {
    if (SkyPilotCloudName(t.provider).empty()) continue;
    for (PricingMode mode : {PricingMode::kOnDemand, PricingMode::kSpot}) {
      std::string yaml = ExportOf(t, ExportFormat::kSkyPilot, mode, t.has_gpu() ? 2 : 1);
      YAML::Node task;
      ASSERT_NO_THROW(task = YAML::Load(yaml)) << yaml;
      CheckSkyPilotSchema(task, t.name);
      EXPECT_EQ(task["resources"]["use_spot"].as<bool>(), mode == PricingMode::kSpot);
      // Read by cloudfit's own SkyPilot reader, the task selects exactly this instance type.
      TaskResources back;
      Status s = ParseSkyPilotTask(yaml, t.name, &back);
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_TRUE(TaskAdmits(catalog, back, t)) << yaml;
      RecommendOptions o;
      ASSERT_TRUE(ApplyTaskToRecommendOptions(catalog, back, &o).ok());
      EXPECT_NE(std::find(o.instances.begin(), o.instances.end(), t.name), o.instances.end())
          << yaml;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// The accelerator names and counts cloudfit writes are the ones SkyPilot's own catalog gives the
// same instance types (../shared holds snapshots of it).
TEST(ExportSkyPilotTest, AcceleratorNamesMatchSkyPilotsCatalog) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  const Catalog& catalog = BuiltInCatalog();
  int compared = 0;
  for (const char* cloud : {"aws/vms.sample.csv", "lambda/vms.csv"}) {
    std::string text = testing::ReadWholeFile(shared + "/catalogs/skypilot/v9/" + cloud);
    if (text.empty()) continue;
    CsvTable table;
    ASSERT_TRUE(ParseCsv(text, cloud, CsvOptions(), &table).ok());
    int type_column = table.ColumnIndex("InstanceType");
    int name_column = table.ColumnIndex("AcceleratorName");
    int count_column = table.ColumnIndex("AcceleratorCount");
    ASSERT_GE(std::min({type_column, name_column, count_column}), 0);
    for (const CsvRow& row : table.rows) {
      std::string type(row.fields[type_column]);
      std::string name(row.fields[name_column]);
      const InstanceType* t = nullptr;
      if (name.empty() || !catalog.FindInstance(type, &t).ok() || t->gpu == nullptr) continue;
      double count = 0;
      ASSERT_TRUE(ParseDouble(row.fields[count_column], &count));
      std::string yaml = ExportOf(*t, ExportFormat::kSkyPilot, PricingMode::kOnDemand);
      EXPECT_EQ(YAML::Load(yaml)["resources"]["accelerators"].as<std::string>(),
                name + ":" + FormatNumberShort(count))
          << type;
      ++compared;
    }
  }
  EXPECT_GT(compared, 20);
}

TEST(ExportSkyPilotTest, ServingPlanAddsAReplicaPolicy) {
  const InstanceType* t = nullptr;
  ASSERT_TRUE(BuiltInCatalog().FindInstance("g5.xlarge", &t).ok());
  ExportTarget target;
  ASSERT_TRUE(ExportTargetForInstance(BuiltInCatalog(), "g5.xlarge", "us-east-1",
                                      PricingMode::kOnDemand, &target)
                  .ok());
  target.serving = true;
  target.autoscaling = AutoscalingPolicy{2, 6, 0.7, 0.3, 0.5};
  target.requests_per_s_per_replica = 3.5;
  std::string yaml;
  ASSERT_TRUE(Export(target, ExportFormat::kSkyPilot, &yaml).ok());
  YAML::Node task = YAML::Load(yaml);
  CheckSkyPilotSchema(task, "serving");
  EXPECT_EQ(task["resources"]["ports"].as<int>(), 8000);
  YAML::Node policy = task["service"]["replica_policy"];
  EXPECT_EQ(policy["min_replicas"].as<int>(), 2);
  EXPECT_EQ(policy["max_replicas"].as<int>(), 6);
  EXPECT_EQ(policy["target_qps_per_replica"].as<double>(), 3.5);
  EXPECT_TRUE(task["service"]["readiness_probe"].IsScalar());
}

TEST(ExportSkyPilotTest, KeepsTheUsersTaskAndReplacesItsResources) {
  ExportTarget target;
  ASSERT_TRUE(ExportTargetForInstance(BuiltInCatalog(), "p5.48xlarge", "us-east-1",
                                      PricingMode::kSpot, &target)
                  .ok());
  target.nodes = 2;
  target.base_task_yaml =
      "name: mine\nresources:\n  accelerators: A100:8\n  use_spot: false\nnum_nodes: 7\n"
      "envs:\n  LR: \"0.001\"\nsetup: |\n  pip install torch\nrun: |\n  python a.py\n  python "
      "b.py\n";
  std::string yaml;
  ASSERT_TRUE(Export(target, ExportFormat::kSkyPilot, &yaml).ok());
  YAML::Node task = YAML::Load(yaml);
  EXPECT_EQ(task["name"].as<std::string>(), "mine");
  EXPECT_EQ(task["envs"]["LR"].as<std::string>(), "0.001");
  EXPECT_EQ(task["run"].as<std::string>(), "python a.py\npython b.py\n");
  EXPECT_EQ(task["num_nodes"].as<int>(), 2);
  EXPECT_EQ(task["resources"]["accelerators"].as<std::string>(), "H100:8");
  EXPECT_TRUE(task["resources"]["use_spot"].as<bool>());
}

TEST(ExportTest, SaysWhereAFormatCannotExpressTheChoice) {
  const Catalog& catalog = BuiltInCatalog();
  struct Case {
    const char* instance;
    ExportFormat format;
    const char* says;
  } cases[] = {
      {"ecs.gn7i-c8g1.2xlarge", ExportFormat::kSkyPilot, "no 'alibaba' cloud"},
      {"GN7.5XLARGE80", ExportFormat::kSkyPilot, "no 'tencent' cloud"},
      {"gpu_1x_a10", ExportFormat::kTerraform, "no official Terraform provider"},
      {"Standard_NV6ads_A10_v5", ExportFormat::kKubernetes, "whole GPUs"},
  };
  for (const Case& c : cases) {
    ExportTarget target;
    ASSERT_TRUE(
        ExportTargetForInstance(catalog, c.instance, "", PricingMode::kOnDemand, &target).ok())
        << c.instance;
    std::string out;
    Status s = Export(target, c.format, &out);
    EXPECT_FALSE(s.ok()) << c.instance;
    EXPECT_NE(s.message().find(c.says), std::string::npos) << s.message();
    EXPECT_TRUE(out.empty());
  }
  ExportTarget target;
  Status s =
      ExportTargetForInstance(catalog, "p4d.24xlarge", "mars-1", PricingMode::kSpot, &target);
  EXPECT_NE(s.message().find("--region"), std::string::npos) << s.message();
  s = ExportTargetForInstance(catalog, "p4d.24xlargee", "", PricingMode::kSpot, &target);
  EXPECT_NE(s.message().find("--instance"), std::string::npos) << s.message();
  ASSERT_TRUE(
      ExportTargetForInstance(catalog, "p4d.24xlarge", "", PricingMode::kSpot, &target).ok());
  target.nodes = 0;
  std::string out;
  EXPECT_NE(Export(target, ExportFormat::kTerraform, &out).message().find("--nodes"),
            std::string::npos);
  target.nodes = 1;
  target.name = "Not A Name";
  EXPECT_NE(Export(target, ExportFormat::kTerraform, &out).message().find("--name"),
            std::string::npos);
}

TEST(ExportTest, ResourceNamesAreRfc1123Labels) {
  EXPECT_EQ(ResourceName("cloudfit-lora-Llama-3.1-8B"), "cloudfit-lora-llama-3-1-8b");
  EXPECT_EQ(ResourceName("8x H100!"), "cf-8x-h100");
  EXPECT_EQ(ResourceName(std::string(100, 'a')).size(), 63u);
  static const std::regex label("[a-z]([-a-z0-9]*[a-z0-9])?");
  for (const char* text : {"--x--", "Ünïcode name", "a", "9", "Standard_ND96asr_v4"}) {
    std::string name = ResourceName(text);
    EXPECT_TRUE(std::regex_match(name, label)) << text << " -> " << name;
    EXPECT_LE(name.size(), 63u);
  }
}

// --- Kubernetes ---

std::vector<YAML::Node> Documents(const std::string& text) {
  std::vector<YAML::Node> docs = YAML::LoadAll(text);
  std::erase_if(docs, [](const YAML::Node& d) { return d.IsNull(); });
  return docs;
}

TEST(ExportKubernetesTest, JobsRequestTheInstancesGpusOnItsNodes) {
  const Catalog& catalog = BuiltInCatalog();
  int checked = 0;
  for (const InstanceType& t : catalog.instances()) {
    if (!t.has_gpu() || !WholeGpus(t)) continue;
    for (int nodes : {1, 3}) {
      std::string text = ExportOf(t, ExportFormat::kKubernetes, PricingMode::kSpot, nodes);
      std::vector<YAML::Node> docs;
      ASSERT_NO_THROW(docs = Documents(text)) << text;
      ASSERT_EQ(docs.size(), nodes > 1 ? 2u : 1u) << t.name;
      const YAML::Node& job = docs.back();
      EXPECT_EQ(job["apiVersion"].as<std::string>(), "batch/v1");
      EXPECT_EQ(job["kind"].as<std::string>(), "Job");
      YAML::Node pod = job["spec"]["template"]["spec"];
      YAML::Node container = pod["containers"][0];
      EXPECT_EQ(container["resources"]["limits"]["nvidia.com/gpu"].as<int>(), t.gpu_count)
          << t.name;
      EXPECT_LE(container["resources"]["requests"]["cpu"].as<int>(), t.vcpus) << t.name;
      YAML::Node selector = pod["nodeSelector"];
      ASSERT_TRUE(selector.IsMap()) << t.name;
      if (t.provider == "gcp") {
        EXPECT_TRUE(selector["cloud.google.com/gke-accelerator"]) << t.name;
        EXPECT_EQ(selector["cloud.google.com/gke-spot"].as<std::string>(), "true");
      } else if (t.provider == "lambda") {
        EXPECT_TRUE(selector["nvidia.com/gpu.product"]) << t.name;
      } else {
        EXPECT_EQ(selector["node.kubernetes.io/instance-type"].as<std::string>(), t.name);
      }
      if (t.provider == "aws") {
        EXPECT_EQ(selector["eks.amazonaws.com/capacityType"].as<std::string>(), "SPOT");
      }
      if (nodes > 1) {
        EXPECT_EQ(docs[0]["kind"].as<std::string>(), "Service");
        EXPECT_EQ(docs[0]["spec"]["clusterIP"].as<std::string>(), "None");
        EXPECT_EQ(job["spec"]["completionMode"].as<std::string>(), "Indexed");
        EXPECT_EQ(job["spec"]["parallelism"].as<int>(), nodes);
        EXPECT_EQ(pod["subdomain"].as<std::string>(),
                  docs[0]["metadata"]["name"].as<std::string>());
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(ExportKubernetesTest, ServingIsADeploymentWithServiceAndAutoscaler) {
  ExportTarget target;
  ASSERT_TRUE(ExportTargetForInstance(BuiltInCatalog(), "a2-highgpu-1g", "", PricingMode::kOnDemand,
                                      &target)
                  .ok());
  target.serving = true;
  target.replicas = 3;
  target.autoscaling = AutoscalingPolicy{2, 9, 0.75, 0.3, 0.6};
  std::string text;
  ASSERT_TRUE(Export(target, ExportFormat::kKubernetes, &text).ok());
  std::vector<YAML::Node> docs = Documents(text);
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0]["kind"].as<std::string>(), "Deployment");
  EXPECT_EQ(docs[0]["spec"]["replicas"].as<int>(), 3);
  EXPECT_EQ(docs[1]["kind"].as<std::string>(), "Service");
  EXPECT_EQ(docs[2]["kind"].as<std::string>(), "HorizontalPodAutoscaler");
  EXPECT_EQ(docs[2]["apiVersion"].as<std::string>(), "autoscaling/v2");
  EXPECT_EQ(docs[2]["spec"]["minReplicas"].as<int>(), 2);
  EXPECT_EQ(docs[2]["spec"]["maxReplicas"].as<int>(), 9);
  EXPECT_EQ(docs[2]["spec"]["metrics"][0]["pods"]["target"]["averageValue"].as<std::string>(),
            "75");
  // The selector matches the pod template's labels, and the Service the same pods.
  std::string app =
      docs[0]["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"].as<std::string>();
  EXPECT_EQ(
      docs[0]["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"].as<std::string>(),
      app);
  EXPECT_EQ(docs[1]["spec"]["selector"]["app.kubernetes.io/name"].as<std::string>(), app);
  EXPECT_EQ(docs[2]["spec"]["scaleTargetRef"]["name"].as<std::string>(),
            docs[0]["metadata"]["name"].as<std::string>());
}

// --- Terraform ---

// A strict reading of the HCL subset cloudfit writes: blocks with quoted labels, attributes,
// strings, lists, objects and references; comments. Records what a structural check needs.
struct HclBlock {
  std::string type;
  std::vector<std::string> labels;
  std::set<std::string> attributes;
  std::vector<HclBlock> blocks;
};

class HclReader {
 public:
  explicit HclReader(const std::string& text) : s_(text) {}

  bool ReadBody(std::vector<HclBlock>* blocks, std::set<std::string>* attributes, bool nested) {
    for (;;) {
      SkipSpaceAndComments();
      if (pos_ >= s_.size()) return !nested || Fail("unclosed block");
      if (s_[pos_] == '}') {
        if (!nested) return Fail("unmatched }");
        ++pos_;
        return true;
      }
      std::string name = Identifier();
      if (name.empty()) return Fail("expected an identifier");
      SkipInlineSpace();
      if (Peek() == '=') {
        ++pos_;
        if (!attributes->insert(name).second) return Fail("duplicate attribute " + name);
        if (!Expression()) return false;
        continue;
      }
      HclBlock block;
      block.type = name;
      while (Peek() == '"') {
        std::string label;
        if (!String(&label)) return false;
        block.labels.push_back(label);
        SkipInlineSpace();
      }
      if (Peek() != '{') return Fail("expected { after " + name);
      ++pos_;
      if (!ReadBody(&block.blocks, &block.attributes, true)) return false;
      blocks->push_back(block);
    }
  }
  const std::string& error() const { return error_; }
  const std::set<std::string>& references() const { return references_; }

 private:
  bool Fail(const std::string& message) {
    if (error_.empty()) error_ = message + " at offset " + std::to_string(pos_);
    return false;
  }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void SkipInlineSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  void SkipSpaceAndComments() {
    for (;;) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (Peek() == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }
  std::string Identifier() {
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || s_[pos_] == '-'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }
  bool String(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\n') return Fail("newline in a string");
      if (s_[pos_] == '\\')
        ++pos_;
      else if (s_[pos_] == '$' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '{') {
        size_t end = s_.find('}', pos_);
        if (end == std::string::npos) return Fail("unclosed interpolation");
        references_.insert(s_.substr(pos_ + 2, end - pos_ - 2));
      }
      if (pos_ < s_.size()) *out += s_[pos_++];
    }
    if (pos_ >= s_.size()) return Fail("unclosed string");
    ++pos_;
    return true;
  }
  // One value up to the end of the line (or the closing bracket of a list or object).
  bool Expression() {
    SkipInlineSpace();
    char c = Peek();
    if (c == '"') {
      std::string ignored;
      return String(&ignored);
    }
    if (c == '[' || c == '{') {
      char close = c == '[' ? ']' : '}';
      ++pos_;
      for (;;) {
        SkipSpaceAndComments();
        if (Peek() == close) {
          ++pos_;
          return true;
        }
        if (c == '{') {
          std::string key = Identifier();
          if (key.empty()) return Fail("expected a key");
          SkipInlineSpace();
          if (Peek() != '=') return Fail("expected = after " + key);
          ++pos_;
        }
        if (!Expression()) return false;
        SkipInlineSpace();
        if (Peek() == ',') ++pos_;
      }
    }
    size_t start = pos_;
    for (int depth = 0; pos_ < s_.size() && s_[pos_] != '\n'; ++pos_) {
      char ch = s_[pos_];
      if (ch == '[')
        ++depth;
      else if (ch == ']' && depth > 0)
        --depth;
      else if (depth == 0 && (ch == ',' || ch == ']' || ch == '}'))
        break;
    }
    std::string word(Trim(s_.substr(start, pos_ - start)));
    if (word.empty()) return Fail("expected a value");
    static const std::regex literal(
        R"(-?[0-9]+(\.[0-9]+)?|true|false|null|string|number|bool|list\((string|number)\))");
    static const std::regex reference(R"([a-z_][a-z0-9_]*(\.[a-z0-9_\-]+|\[[a-z0-9.*_]+\])+)");
    if (std::regex_match(word, literal)) return true;
    if (!std::regex_match(word, reference)) return Fail("not a literal or reference: " + word);
    references_.insert(word);
    return true;
  }

  const std::string s_;
  size_t pos_ = 0;
  std::string error_;
  std::set<std::string> references_;
};

// Arguments each resource type's documentation (registry.terraform.io) marks required, among
// those cloudfit writes.
const std::map<std::string, std::vector<std::string>> kRequired = {
    {"aws_instance", {"ami", "instance_type"}},
    {"google_compute_instance", {"name", "machine_type", "boot_disk", "network_interface"}},
    {"azurerm_linux_virtual_machine",
     {"name", "resource_group_name", "location", "size", "admin_username", "network_interface_ids",
      "os_disk"}},
    {"alicloud_instance", {"image_id", "instance_type", "security_groups"}},
    {"tencentcloud_instance", {"availability_zone", "image_id"}},
};
const std::map<std::string, std::string> kSource = {{"aws", "hashicorp/aws"},
                                                    {"gcp", "hashicorp/google"},
                                                    {"azure", "hashicorp/azurerm"},
                                                    {"alibaba", "aliyun/alicloud"},
                                                    {"tencent", "tencentcloudstack/tencentcloud"}};

TEST(ExportTerraformTest, EveryInstanceOfTheFiveProvidersIsWellFormed) {
  const Catalog& catalog = BuiltInCatalog();
  int checked = 0;
  for (const InstanceType& t : catalog.instances()) {
    if (!kSource.count(t.provider)) continue;
    for (PricingMode mode : {PricingMode::kOnDemand, PricingMode::kSpot}) {
      std::string text = ExportOf(t, ExportFormat::kTerraform, mode, 2);
      HclReader reader(text);
      std::vector<HclBlock> blocks;
      std::set<std::string> top;
      ASSERT_TRUE(reader.ReadBody(&blocks, &top, false)) << reader.error() << "\n" << text;
      EXPECT_TRUE(top.empty());
      std::set<std::string> declared;
      int instances = 0;
      for (const HclBlock& b : blocks) {
        if (b.type == "variable" || b.type == "resource" || b.type == "data") {
          std::string prefix = b.type == "variable" ? "var." : b.type == "data" ? "data." : "";
          declared.insert(prefix + Join(b.labels, "."));
        }
        if (b.type != "resource") continue;
        ASSERT_EQ(b.labels.size(), 2u);
        auto required = kRequired.find(b.labels[0]);
        if (required == kRequired.end()) continue;
        ++instances;
        std::set<std::string> present = b.attributes;
        for (const HclBlock& nested : b.blocks) present.insert(nested.type);
        for (const std::string& r : required->second) {
          EXPECT_TRUE(present.count(r)) << t.name << ": " << b.labels[0] << " lacks " << r;
        }
        EXPECT_TRUE(b.attributes.count("count")) << t.name;
      }
      EXPECT_EQ(instances, 1) << t.name << "\n" << text;
      EXPECT_NE(text.find("source  = \"" + kSource.at(t.provider) + "\""), std::string::npos);
      // Every reference names something declared in the file (or a count index).
      for (const std::string& ref : reader.references()) {
        if (ref == "count.index") continue;
        std::string head = ref.substr(0, ref.find_first_of("[*"));
        std::vector<std::string> parts = SplitList(head, '.');
        ASSERT_GE(parts.size(), 2u) << ref;
        std::string name =
            parts[0] == "var" || parts[0] == "data"
                ? parts[0] + "." + parts[1] + (parts[0] == "data" ? "." + parts[2] : "")
                : parts[0] + "." + parts[1];
        EXPECT_TRUE(declared.count(name)) << t.name << ": undeclared " << ref;
      }
      bool spot = mode == PricingMode::kSpot;
      if (t.provider == "aws") {
        EXPECT_EQ(text.find("market_type = \"spot\"") != std::string::npos, spot);
      }
      if (t.provider == "gcp") {
        EXPECT_EQ(text.find("\"SPOT\"") != std::string::npos, spot);
      }
      if (t.provider == "azure") {
        EXPECT_EQ(text.find("priority        = \"Spot\"") != std::string::npos, spot);
      }
      if (t.provider == "alibaba") {
        EXPECT_EQ(text.find("SpotAsPriceGo") != std::string::npos, spot);
      }
      if (t.provider == "tencent") {
        EXPECT_EQ(text.find("SPOTPAID") != std::string::npos, spot);
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 200);
}

TEST(ExportTerraformTest, TheReaderRejectsBrokenHcl) {
  for (const char* bad : {"resource \"a\" \"b\" {\n  x = 1\n", "x = \"open\n", "a {\n  x =\n}\n",
                          "a {\n  x = 1\n  x = 2\n}\n", "a {\n  x = $bad\n}\n", "}\n"}) {
    HclReader reader(bad);
    std::vector<HclBlock> blocks;
    std::set<std::string> top;
    EXPECT_FALSE(reader.ReadBody(&blocks, &top, false)) << bad;
  }
}

TEST(ExportTerraformTest, GpuDriversWhereTheProviderNamesThem) {
  auto tf = [](const char* name) {
    const InstanceType* t = nullptr;
    EXPECT_TRUE(BuiltInCatalog().FindInstance(name, &t).ok()) << name;
    return ExportOf(*t, ExportFormat::kTerraform, PricingMode::kOnDemand);
  };
  EXPECT_NE(
      tf("p4d.24xlarge").find("/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu"),
      std::string::npos);
  std::string n1 = tf("n1-standard-8+1xT4");
  EXPECT_NE(n1.find("machine_type = \"n1-standard-8\""), std::string::npos);
  EXPECT_NE(n1.find("type  = \"nvidia-tesla-t4\""), std::string::npos);
  EXPECT_NE(n1.find("on_host_maintenance = \"TERMINATE\""), std::string::npos);
  EXPECT_NE(n1.find("deeplearning-platform-release"), std::string::npos);
  std::string a2 = tf("a2-highgpu-1g");
  EXPECT_EQ(a2.find("guest_accelerator"), std::string::npos);  // A2 carries its GPUs
  EXPECT_NE(tf("Standard_NC24ads_A100_v4").find("NvidiaGpuDriverLinux"), std::string::npos);
  EXPECT_EQ(tf("c7i.large").find("deeplearning"), std::string::npos);
}

}  // namespace
}  // namespace cloudfit
