// The same workload through the command line's flags, a workload file, a JSON Lines line and
// POST /v1/recommend gives the same answer, byte for byte in the JSON: one decoder
// (cloudfit/request.h) builds the Workload and RecommendOptions for all four.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cloudfit/request.h"
#include "server/api.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using nlohmann::json;

struct Case {
  std::string name;
  json workload;  // field -> value (strings, as a user types them)
  json options;   // option -> value
};

std::string Flag(const std::string& key) {
  std::string flag = "--" + key;
  for (char& c : flag) {
    if (c == '_') c = '-';
  }
  return flag;
}

std::string Quoted(const std::string& v) { return "'" + v + "'"; }

// The four answers' "recommendation" documents, dumped canonically.
std::vector<std::pair<std::string, std::string>> FourWays(const Case& c) {
  testing::TempDir dir;
  std::vector<std::pair<std::string, std::string>> out;
  // 1. Flags.
  std::string options_flags;
  for (const auto& [k, v] : c.options.items()) {
    std::string flag = k == "providers"       ? "--provider"
                       : k == "exclude_costs" ? "--exclude-cost"
                                              : Flag(k);
    options_flags += " " + flag + " " + Quoted(v.is_string() ? v.get<std::string>() : v.dump());
  }
  std::string flags;
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on " " + a temporary string.
  for (const auto& [k, v] : c.workload.items()) {
    flags.append(" ").append(Flag(k)).append(" ").append(Quoted(v.get<std::string>()));
  }
  testing::ProgramRun r = testing::RunCloudfit(dir, "recommend --json" + flags + options_flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  out.emplace_back("flags", json::parse(r.out, nullptr, false).dump());
  // 2. A workload file (YAML), options as flags.
  std::string yaml;
  for (const auto& [k, v] : c.workload.items()) yaml += k + ": " + v.get<std::string>() + "\n";
  dir.Write("job.yaml", yaml);
  r = testing::RunCloudfit(dir, "recommend --json --file job.yaml" + options_flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  out.emplace_back("file", json::parse(r.out, nullptr, false).dump());
  // 3. JSON Lines: workload fields and options in one flat object.
  json line = c.workload;
  for (const auto& [k, v] : c.options.items()) line[k] = v;
  line["id"] = c.name;
  dir.Write("requests.jsonl", line.dump() + "\n");
  r = testing::RunCloudfit(dir, "recommend --jsonl requests.jsonl");
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  json result = json::parse(r.out, nullptr, false);
  out.emplace_back("jsonl", result.is_object() ? result["recommendation"].dump() : "");
  // 4. POST /v1/recommend, without the chart's points.
  ApiResponse api = ApiRecommend(testing::BuiltInCatalog(),
                                 json{{"workload", c.workload}, {"options", c.options}}.dump());
  EXPECT_EQ(api.status, 200) << api.body;
  json body = json::parse(api.body, nullptr, false);
  if (body.is_object()) body.erase("points");
  out.emplace_back("api", body.dump());
  return out;
}

// The path of the first value where two documents differ, to say where parity broke.
std::string FirstDifference(const json& a, const json& b, const std::string& path = "") {
  if (a.type() != b.type()) return path + " (type)";
  if (a.is_object()) {
    for (const auto& [k, v] : a.items()) {
      if (!b.contains(k)) return path + "." + k + " (missing)";
      std::string d = FirstDifference(v, b[k], path + "." + k);
      if (!d.empty()) return d;
    }
    for (const auto& [k, v] : b.items()) {
      if (!a.contains(k)) return path + "." + k + " (extra)";
    }
    return "";
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return path + " (length)";
    for (size_t i = 0; i < a.size(); ++i) {
      std::string d = FirstDifference(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!d.empty()) return d;
    }
    return "";
  }
  return a == b ? "" : path + ": " + a.dump() + " vs " + b.dump();
}

void ExpectIdentical(const Case& c) {
  auto answers = FourWays(c);
  ASSERT_EQ(answers.size(), 4u);
  const std::string& reference = answers.front().second;
  EXPECT_GT(reference.size(), 100u) << c.name;
  for (const auto& [way, doc] : answers) {
    EXPECT_EQ(doc, reference) << c.name << ": " << way << " differs from flags at "
                              << FirstDifference(json::parse(reference, nullptr, false),
                                                 json::parse(doc, nullptr, false));
  }
}

TEST(RequestParityTest, ServingGetsTheSameDefaultsEverywhere) {
  // The issue: the CLI and POST /v1/recommend used different serving defaults and gave
  // different first choices (on-demand GH200 x8 against spot A100 x13).
  Case c{"serve",
         {{"kind", "serve"},
          {"model", "Llama-2-13B"},
          {"request_rate", "30"},
          {"ttft_target_ms", "1000"}},
         {{"top", 3}}};
  ExpectIdentical(c);
  ApiResponse api = ApiRecommend(testing::BuiltInCatalog(),
                                 json{{"workload", c.workload}, {"options", c.options}}.dump());
  json doc = json::parse(api.body);
  EXPECT_EQ(doc["options"]["pricing"], json::array({"ondemand"}))
      << "serving is priced on demand unless asked";
  EXPECT_FALSE(doc["assumptions"].empty());
}

TEST(RequestParityTest, TrainingWithOptionsAndTheEpochRule) {
  Case c{"lora",
         {{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"epochs", "2"}, {"tokens", "50e6"}},
         {{"deadline_hours", "72"},
          {"providers", "aws,gcp"},
          {"top", "4"},
          {"exclude_costs", "storage"}}};
  ExpectIdentical(c);
}

TEST(RequestParityTest, OneDecoderOneSetOfErrors) {
  RecommendRequest r;
  Status s = DecodeRecommendRequest(
      testing::BuiltInCatalog(),
      json{{"workload", {{"kind", "train"}, {"model", "ResNet-50"}, {"batch", "-4"}}}}, &r);
  EXPECT_NE(s.message().find("workload.batch: '-4' is not allowed"), std::string::npos)
      << s.message();
  s = DecodeRecommendRequest(testing::BuiltInCatalog(),
                             json{{"kind", "train"}, {"model", "ResNet-50"}, {"top", "many"}}, &r);
  EXPECT_NE(s.message().find("top: 'many' is not allowed"), std::string::npos) << s.message();
  s = DecodeRecommendRequest(
      testing::BuiltInCatalog(),
      json{{"workload", {{"kind", "train"}, {"model", "ResNet-50"}}}, {"options", {{"colour", 1}}}},
      &r);
  EXPECT_NE(s.message().find("options.colour: unknown option; known:"), std::string::npos)
      << s.message();
  // Flat and structured forms decode to the same options.
  RecommendRequest flat, nested;
  ASSERT_TRUE(DecodeRecommendRequest(
                  testing::BuiltInCatalog(),
                  json{{"kind", "serve"}, {"model", "Llama-2-13B"}, {"spot", true}, {"top", 2}},
                  &flat)
                  .ok());
  ASSERT_TRUE(
      DecodeRecommendRequest(testing::BuiltInCatalog(),
                             json{{"workload", {{"kind", "serve"}, {"model", "Llama-2-13B"}}},
                                  {"options", {{"spot", "true"}, {"top", "2"}}}},
                             &nested)
          .ok());
  EXPECT_EQ(flat.options.pricing, nested.options.pricing);
  EXPECT_EQ(flat.options.pricing.size(), 2u) << "spot asked for a service";
  EXPECT_EQ(flat.options.top, 2u);
}

// SkyPilot's "A100:8" is read by the decoder, so a workload file, a JSON Lines line and the API
// take it as --gpu does: the instance types with exactly that many per node.
TEST(RequestParityTest, AcceleratorCountsDecodeEverywhere) {
  const Catalog& catalog = testing::BuiltInCatalog();
  RecommendRequest r;
  ASSERT_TRUE(DecodeRecommendRequest(catalog,
                                     json{{"workload", {{"kind", "train"}, {"model", "ResNet-50"}}},
                                          {"options", {{"gpus", "A100:8"}}}},
                                     &r)
                  .ok());
  EXPECT_TRUE(r.options.gpus.empty()) << "the instance list carries the GPU and its count";
  ASSERT_FALSE(r.options.instances.empty());
  for (const std::string& name : r.options.instances) {
    const InstanceType* t = nullptr;
    ASSERT_TRUE(catalog.FindInstance(name, &t).ok()) << name;
    EXPECT_EQ(t->gpu_count, 8) << name;
    EXPECT_NE(t->gpu->name.find("A100"), std::string::npos) << name;
  }
  Status s = DecodeRecommendRequest(catalog,
                                    json{{"workload", {{"kind", "train"}, {"model", "ResNet-50"}}},
                                         {"options", {{"gpus", "A100:x"}}}},
                                    &r);
  EXPECT_EQ(s.message().rfind("options.gpus: 'A100:x' has no valid count", 0), 0u) << s.message();
  s = DecodeRecommendRequest(
      catalog, json{{"kind", "train"}, {"model", "ResNet-50"}, {"gpus", "A100:3"}}, &r);
  EXPECT_EQ(s.message().rfind("gpus: no instance type in the catalog has A100:3", 0), 0u)
      << s.message();
}

}  // namespace
}  // namespace cloudfit
