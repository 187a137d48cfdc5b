// SkyPilot task input: accelerator strings, the resources section, and what they select in the
// catalog for recommend and estimate.
#include "cloudfit/skypilot_task.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cloudfit/hardware.h"
#include "cloudfit/recommend.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using testing::BuiltInCatalog;

TEST(AcceleratorRequestTest, ParsesNameAndCount) {
  AcceleratorRequest r;
  ASSERT_TRUE(ParseAcceleratorRequest("A100:8", "--gpu", &r).ok());
  EXPECT_EQ(r.name, "A100");
  EXPECT_EQ(r.count, 8);
  ASSERT_TRUE(ParseAcceleratorRequest(" H100 ", "--gpu", &r).ok());
  EXPECT_EQ(r.name, "H100");
  EXPECT_EQ(r.count, 1);
  ASSERT_TRUE(ParseAcceleratorRequest("A10:0.5", "--gpu", &r).ok());
  EXPECT_EQ(r.count, 0.5);
}

TEST(AcceleratorRequestTest, RejectsBadCountsNamingTheField) {
  AcceleratorRequest r;
  for (const char* bad :
       {"A100:", "A100:0", "A100:-8", "A100:nan", "A100:1e9", ":8", "A100:eight"}) {
    Status s = ParseAcceleratorRequest(bad, "--gpu", &r);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("--gpu"), std::string::npos) << s.message();
  }
}

TEST(SkyPilotTaskTest, ReadsResourcesInEveryAcceleratorForm) {
  const char* forms[] = {
      "resources:\n  accelerators: A100:8\n",
      "resources:\n  accelerators: {A100: 8}\n",
      "resources:\n  accelerators: [A100:8]\n",
      "resources:\n  accelerators: \"{A100:8}\"\n",
  };
  for (const char* yaml : forms) {
    TaskResources t;
    ASSERT_TRUE(ParseSkyPilotTask(yaml, "task.yaml", &t).ok()) << yaml;
    ASSERT_EQ(t.accelerators.size(), 1u) << yaml;
    EXPECT_EQ(t.accelerators[0].name, "A100");
    EXPECT_EQ(t.accelerators[0].count, 8);
  }
  TaskResources t;
  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  accelerators: {A100:8, H100:8}\n", "t", &t).ok());
  EXPECT_EQ(t.accelerators.size(), 2u);
}

TEST(SkyPilotTaskTest, ReadsInfraSpotCpusMemoryDiskAndNodes) {
  TaskResources t;
  Status s = ParseSkyPilotTask(
      "name: x\nnum_nodes: 2\nresources:\n  infra: aws/us-east-1\n  use_spot: true\n"
      "  cpus: 8+\n  memory: 64GB+\n  disk_size: 1TB\n  ports: 8080\nrun: echo hi\n",
      "task.yaml", &t);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.cloud, "aws");
  EXPECT_EQ(t.region, "us-east-1");
  EXPECT_EQ(t.num_nodes, 2);
  ASSERT_TRUE(t.use_spot.has_value());
  EXPECT_TRUE(*t.use_spot);
  ASSERT_TRUE(t.cpus && t.memory_gib && t.disk_size_gb);
  EXPECT_TRUE(t.cpus->at_least);
  EXPECT_EQ(t.cpus->value, 8);
  EXPECT_EQ(t.memory_gib->value, 64);
  EXPECT_EQ(*t.disk_size_gb, 1024);
  EXPECT_EQ(t.ignored, std::vector<std::string>{"ports"});

  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  cloud: GCP\n  region: us-central1\n", "t", &t).ok());
  EXPECT_EQ(t.cloud, "gcp");
  EXPECT_EQ(t.region, "us-central1");
  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  infra: '*/eu-west-1'\n", "t", &t).ok());
  EXPECT_EQ(t.cloud, "");
  EXPECT_EQ(t.region, "eu-west-1");
}

TEST(SkyPilotTaskTest, RejectsWhatSkyPilotWouldRejectNamingTheKey) {
  struct Case {
    const char* yaml;
    const char* names;
  } cases[] = {
      {"resources:\n  acelerators: A100:8\n", "resources.acelerators"},
      {"resourses:\n  accelerators: A100:8\n", "resourses"},
      {"resources:\n  use_spot: maybe\n", "resources.use_spot"},
      {"resources:\n  cpus: -4\n", "resources.cpus"},
      {"resources:\n  memory: lots\n", "resources.memory"},
      {"resources:\n  disk_size: 0\n", "resources.disk_size"},
      {"resources:\n  infra: aws/us-east-1\n  cloud: aws\n", "resources.infra"},
      {"resources:\n  infra: k8s/my-cluster\n", "resources.infra"},
      {"resources:\n  accelerators: A100:x\n", "resources.accelerators"},
      {"resources:\n  any_of:\n    - accelerators: A100:8\n", "resources.any_of"},
      {"num_nodes: 0\n", "num_nodes"},
      {"resources: [1, 2]\n", "resources"},
      {"resources: {accelerators: [A100:8\n", "not valid YAML"},
      {"name: a\n---\nname: b\n", "2 YAML documents"},
  };
  for (const Case& c : cases) {
    TaskResources t;
    Status s = ParseSkyPilotTask(c.yaml, "task.yaml", &t);
    EXPECT_FALSE(s.ok()) << c.yaml;
    EXPECT_NE(s.message().find(c.names), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("task.yaml"), std::string::npos) << s.message();
  }
}

// yaml-cpp 0.7's LoadAll never returns on these (an empty document answered forever, memory
// growing): found by the skypilot_task fuzzer. They are refused, quickly, as not valid YAML;
// a stream of several (empty) documents is still read.
TEST(SkyPilotTaskTest, MalformedYamlThatHangsTheParserIsRefused) {
  for (const char* yaml : {",", ",^a}a8:8:", "[a], b"}) {
    TaskResources t;
    Status s = ParseSkyPilotTask(yaml, "task.yaml", &t);
    EXPECT_FALSE(s.ok()) << yaml;
    EXPECT_NE(s.message().find("task.yaml: not valid YAML"), std::string::npos) << s.message();
  }
  TaskResources t;
  EXPECT_TRUE(ParseSkyPilotTask("---\n---\nresources:\n  cpus: 4\n---\n", "task.yaml", &t).ok());
  ASSERT_TRUE(t.cpus.has_value());
  EXPECT_EQ(t.cpus->value, 4);
}

TEST(SkyPilotTaskTest, SkyPilotNamesFollowItsCatalog) {
  const Catalog& catalog = BuiltInCatalog();
  auto sky = [&](const char* name) {
    const Accelerator* a = nullptr;
    EXPECT_TRUE(catalog.FindAccelerator(name, &a).ok()) << name;
    return a ? SkyPilotAcceleratorName(*a) : std::string();
  };
  EXPECT_EQ(sky("A100-SXM4-40GB"), "A100");
  EXPECT_EQ(sky("A100-SXM4-80GB"), "A100-80GB");
  EXPECT_EQ(sky("H100-SXM5-80GB"), "H100");
  EXPECT_EQ(sky("V100-SXM2-32GB"), "V100-32GB");
  EXPECT_EQ(sky("RTX-A6000"), "A6000");
  EXPECT_EQ(sky("A10G"), "A10G");
  EXPECT_EQ(SkyPilotCloudName("aws"), "aws");
  EXPECT_EQ(SkyPilotCloudName("alibaba"), "");
}

std::vector<std::string> RecommendInstances(const std::string& yaml) {
  TaskResources t;
  EXPECT_TRUE(ParseSkyPilotTask(yaml, "t", &t).ok()) << yaml;
  RecommendOptions o;
  Status s = ApplyTaskToRecommendOptions(BuiltInCatalog(), t, &o);
  EXPECT_TRUE(s.ok()) << s.message();
  return o.instances;
}

TEST(SkyPilotTaskTest, NarrowsRecommendToTheInstancesTheTaskAdmits) {
  const Catalog& catalog = BuiltInCatalog();
  std::vector<std::string> a100x8 = RecommendInstances("resources:\n  accelerators: A100:8\n");
  ASSERT_FALSE(a100x8.empty());
  for (const std::string& name : a100x8) {
    const InstanceType* t = nullptr;
    ASSERT_TRUE(catalog.FindInstance(name, &t).ok());
    EXPECT_EQ(t->gpu_count, 8) << name;
    ASSERT_NE(t->gpu, nullptr);
    EXPECT_EQ(SkyPilotAcceleratorName(*t->gpu), "A100") << name;
  }
  // SkyPilot's "A100" is the 40 GB board, SXM or PCIe: AWS p4d and Lambda's 8x A100 both count.
  auto has = [](const std::vector<std::string>& v, const char* n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  EXPECT_TRUE(has(a100x8, "p4d.24xlarge"));
  EXPECT_TRUE(has(a100x8, "gpu_8x_a100"));
  EXPECT_FALSE(has(a100x8, "p4de.24xlarge"));  // A100-80GB

  std::vector<std::string> aws =
      RecommendInstances("resources:\n  infra: aws\n  accelerators: A100:8\n");
  EXPECT_EQ(aws, std::vector<std::string>{"p4d.24xlarge"});

  // GCP's N1 with attached GPUs: SkyPilot's instance_type is the bare machine type.
  std::vector<std::string> n1 =
      RecommendInstances("resources:\n  instance_type: n1-standard-8\n  accelerators: T4:1\n");
  EXPECT_EQ(n1, std::vector<std::string>{"n1-standard-8+1xT4"});

  std::vector<std::string> big = RecommendInstances("resources:\n  cpus: 96+\n  memory: 1000+\n");
  for (const std::string& name : big) {
    const InstanceType* t = nullptr;
    ASSERT_TRUE(catalog.FindInstance(name, &t).ok());
    EXPECT_GE(t->vcpus, 96) << name;
    EXPECT_GE(t->memory_gib(), 999) << name;
  }
}

TEST(SkyPilotTaskTest, AppliesCloudRegionSpotAndNodesToRecommendOptions) {
  TaskResources t;
  ASSERT_TRUE(
      ParseSkyPilotTask("num_nodes: 4\nresources:\n  infra: gcp/us-central1\n", "t", &t).ok());
  RecommendOptions o;
  ASSERT_TRUE(ApplyTaskToRecommendOptions(BuiltInCatalog(), t, &o).ok());
  EXPECT_EQ(o.providers, std::vector<std::string>{"gcp"});
  EXPECT_EQ(o.regions, std::vector<std::string>{"us-central1"});
  EXPECT_EQ(o.max_nodes, 4);
  EXPECT_TRUE(o.instances.empty());  // nothing narrows the instance types themselves
}

TEST(SkyPilotTaskTest, SaysWhenNothingMatchesOrANameIsUnknown) {
  const Catalog& catalog = BuiltInCatalog();
  TaskResources t;
  RecommendOptions o;
  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  accelerators: A100:3\n", "t", &t).ok());
  Status s = ApplyTaskToRecommendOptions(catalog, t, &o);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("A100:3"), std::string::npos) << s.message();

  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  accelerators: Z9000:1\n", "t", &t).ok());
  s = ApplyTaskToRecommendOptions(catalog, t, &o);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("resources.accelerators"), std::string::npos) << s.message();

  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  cloud: runpod\n", "t", &t).ok());
  s = ApplyTaskToRecommendOptions(catalog, t, &o);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("runpod"), std::string::npos) << s.message();
}

TEST(SkyPilotTaskTest, GivesEstimateItsOneHardwareChoice) {
  const Catalog& catalog = BuiltInCatalog();
  TaskResources t;
  HardwareSpec spec;
  ASSERT_TRUE(
      ParseSkyPilotTask("num_nodes: 2\nresources:\n  accelerators: H100:8\n", "t", &t).ok());
  ASSERT_TRUE(ApplyTaskToHardwareSpec(catalog, t, &spec).ok());
  EXPECT_EQ(spec.gpu, "H100");
  EXPECT_EQ(spec.gpus, 8);
  EXPECT_EQ(spec.nodes, 2);

  spec = HardwareSpec();
  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  instance_type: p4de.24xlarge\n", "t", &t).ok());
  ASSERT_TRUE(ApplyTaskToHardwareSpec(catalog, t, &spec).ok());
  EXPECT_EQ(spec.instance, "p4de.24xlarge");

  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  accelerators: {A100:8, H100:8}\n", "t", &t).ok());
  EXPECT_FALSE(ApplyTaskToHardwareSpec(catalog, t, &spec).ok());
  ASSERT_TRUE(ParseSkyPilotTask("resources:\n  use_spot: true\n", "t", &t).ok());
  EXPECT_FALSE(ApplyTaskToHardwareSpec(catalog, t, &spec).ok());
}

TEST(SkyPilotTaskTest, GpuCountsInRecommendGpuFlag) {
  const Catalog& catalog = BuiltInCatalog();
  RecommendOptions o;
  o.gpus = {"H100:8", "L4"};
  ASSERT_TRUE(ApplyAcceleratorCounts(catalog, &o).ok());
  EXPECT_TRUE(o.gpus.empty());
  ASSERT_FALSE(o.instances.empty());
  bool any_l4 = false;
  for (const std::string& name : o.instances) {
    const InstanceType* t = nullptr;
    ASSERT_TRUE(catalog.FindInstance(name, &t).ok());
    ASSERT_NE(t->gpu, nullptr) << name;
    if (t->gpu->name == "L4")
      any_l4 = true;
    else
      EXPECT_EQ(t->gpu_count, 8) << name;
  }
  EXPECT_TRUE(any_l4);
  RecommendOptions untouched;
  untouched.gpus = {"A100"};
  ASSERT_TRUE(ApplyAcceleratorCounts(catalog, &untouched).ok());
  EXPECT_EQ(untouched.gpus, std::vector<std::string>{"A100"});
  EXPECT_TRUE(untouched.instances.empty());
  RecommendOptions bad;
  bad.gpus = {"A100:7"};
  EXPECT_FALSE(ApplyAcceleratorCounts(catalog, &bad).ok());
}

}  // namespace
}  // namespace cloudfit
