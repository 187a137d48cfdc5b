// The HTTP API over a real socket: every route answers with the schema openapi.json declares,
// bad input gets 400 naming the field, unknown routes 404, large bodies 413, and the server
// stops with requests in flight finished.
#include "cloudfit/server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cloudfit/workload.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using nlohmann::json;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.port = 0;
    o.max_body_bytes = 64 * 1024;
    server_ = std::make_unique<ApiServer>(testing::BuiltInCatalog(), o);
    std::string error;
    ASSERT_TRUE(server_->Bind(&error)) << error;
    thread_ = std::thread([this] { server_->Serve(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(30, 0);
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }

  // Checks `body` against an OpenAPI schema object: required keys and declared types.
  void ExpectMatches(const json& body, const json& schema, const json& spec) {
    json s = schema;
    if (s.contains("$ref")) {
      std::string ref = s["$ref"];
      s = spec["components"]["schemas"][ref.substr(ref.rfind('/') + 1)];
    }
    if (s.value("type", json()) == "object") {
      ASSERT_TRUE(body.is_object()) << body.dump().substr(0, 200);
      const json required = s.value("required", json::array());
      const json properties = s.value("properties", json::object());
      for (const auto& key : required) {
        EXPECT_TRUE(body.contains(key.get<std::string>())) << "missing " << key;
      }
      for (const auto& [key, sub] : properties.items()) {
        if (!body.contains(key) || !sub.contains("type") || !sub["type"].is_string()) continue;
        std::string type = sub["type"];
        const json& v = body[key];
        bool matches = type == "string"    ? v.is_string()
                       : type == "number"  ? v.is_number()
                       : type == "integer" ? v.is_number_integer()
                       : type == "boolean" ? v.is_boolean()
                                           : true;
        EXPECT_TRUE(matches) << key << " is not a " << type;
        if (type == "array") {
          ASSERT_TRUE(v.is_array()) << key;
          if (sub.contains("items") && !v.empty()) ExpectMatches(v[0], sub["items"], spec);
        }
        if (sub.contains("enum")) {
          EXPECT_NE(std::find(sub["enum"].begin(), sub["enum"].end(), v), sub["enum"].end()) << key;
        }
      }
    }
  }

  std::unique_ptr<ApiServer> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

const char* kRecommend =
    R"({"workload": {"kind": "lora", "model": "Llama-3.1-8B", "seq_len": 2048, "tokens": 5e7},
        "options": {"top": 3, "providers": ["aws", "gcp"], "deadline_hours": 48}})";
const char* kExport =
    R"({"format": "skypilot", "rank": 1,
        "workload": {"kind": "lora", "model": "Llama-3.1-8B", "seq_len": 2048, "tokens": 5e7},
        "options": {"providers": ["aws", "gcp"], "deadline_hours": 48}})";
const char* kEstimate =
    R"({"workload": {"kind": "serve", "model": "Llama-2-13B", "precision": "fp16"},
        "hardware": {"gpu": "A100-80GB", "gpus": 1}})";

TEST_F(ServerTest, EveryRouteInTheOpenApiDocumentAnswersWithItsSchema) {
  auto spec_res = client_->Get("/openapi.json");
  ASSERT_TRUE(spec_res);
  ASSERT_EQ(spec_res->status, 200);
  json spec = json::parse(spec_res->body);
  int checked = 0;
  for (const auto& [path, methods] : spec["paths"].items()) {
    for (const auto& [method, op] : methods.items()) {
      std::string query = path == "/v1/instances" ? "?gpu=H100&top=3" : "";
      httplib::Result res = method == "get" ? client_->Get((path + query).c_str())
                                            : client_->Post(path.c_str(),
                                                            path == "/v1/recommend" ? kRecommend
                                                            : path == "/v1/export"  ? kExport
                                                                                    : kEstimate,
                                                            "application/json");
      ASSERT_TRUE(res) << path;
      EXPECT_EQ(res->status, 200) << method << " " << path << ": " << res->body.substr(0, 200);
      const json& media = op["responses"]["200"]["content"];
      if (media.contains("application/json")) {
        ExpectMatches(json::parse(res->body), media["application/json"]["schema"], spec);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 11) << "routes in openapi.json";
}

TEST_F(ServerTest, BadInputIsA400NamingTheField) {
  auto res = client_->Post("/v1/recommend",
                           R"({"workload": {"kind": "train", "model": "ResNet-50", "batch": -4}})",
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(json::parse(res->body)["error"].get<std::string>().find("workload.batch"),
            std::string::npos);
  res = client_->Post("/v1/recommend", "{not json", "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("malformed JSON"), std::string::npos);
  res = client_->Post(
      "/v1/recommend",
      R"({"workload": {"kind": "train", "model": "ResNet-50"}, "options": {"objective": "prettiest"}})",
      "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("options.objective"), std::string::npos);
  res = client_->Post(
      "/v1/estimate",
      R"({"workload": {"kind": "train", "model": "ResNet-50"}, "hardware": {"gpu": "H1000"}})",
      "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("hardware.gpu: unknown GPU 'H1000'"), std::string::npos) << res->body;
  res = client_->Get("/v1/instances?vcpus_min=lots");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("vcpus_min"), std::string::npos);
  res = client_->Get("/v1/instances?colour=blue");
  EXPECT_EQ(res->status, 400);
}

// The API names its own fields, never the command line's flags.
TEST_F(ServerTest, AnUnknownCurrencyNamesTheRequestsField) {
  auto res = client_->Post("/v1/recommend",
                           R"({"workload": {"kind": "lora", "model": "Llama-3.1-8B"},
                               "options": {"currency": "XYZ"}})",
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  std::string error = json::parse(res->body)["error"];
  EXPECT_EQ(error.rfind("options.currency: 'XYZ' has no rate; known: ", 0), 0u) << error;
  EXPECT_NE(error.find("USD"), std::string::npos) << error;
  EXPECT_EQ(error.find("--"), std::string::npos) << error;
  // Nor do the options the recommender checks itself (it names them; the API puts them under
  // "options.").
  for (const char* options :
       {R"({"pricing": []})", R"({"serving_hours": 0.002})", R"({"min_gpus": 8, "max_gpus": 4})",
        R"({"regions": ["nowhere-1"]})", R"({"exclude_costs": ["compute"]})",
        R"({"instances": ["no.such.type"]})", R"({"exclude_gpus": ["NoSuchGpu"]})"}) {
    res = client_->Post("/v1/recommend",
                        std::string(R"({"workload": {"kind": "lora", "model": "Llama-3.1-8B"},
                                        "options": )") +
                            options + "}",
                        "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << options;
    std::string message = json::parse(res->body)["error"];
    EXPECT_EQ(message.rfind("options.", 0), 0u) << message;
    EXPECT_EQ(message.find("--"), std::string::npos) << message;
  }
  // A known currency in lower case is the same currency.
  res = client_->Post("/v1/recommend",
                      R"({"workload": {"kind": "lora", "model": "Llama-3.1-8B", "tokens": 5e7},
                          "options": {"currency": "cny", "top": 1, "providers": ["aws"]}})",
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body.substr(0, 300);
}

TEST_F(ServerTest, ExportWritesTheRankedOfferAsTheCommandDoes) {
  // The same offer as recommend's first: its instance type is in the SkyPilot task.
  auto rec = client_->Post("/v1/recommend", kRecommend, "application/json");
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->status, 200);
  std::string first = json::parse(rec->body)["ranked"][0]["instance_type"];
  auto res = client_->Post("/v1/export", kExport, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json out = json::parse(res->body);
  EXPECT_EQ(out["format"], "skypilot");
  EXPECT_NE(out["text"].get<std::string>().find("instance_type: " + first), std::string::npos)
      << out["text"];
  EXPECT_EQ(out["filename"], "cloudfit-lora-llama-3-1-8b.sky.yaml");
  // Terraform and Kubernetes of a named instance; the name is made a label.
  res = client_->Post("/v1/export",
                      R"({"format": "terraform", "instance": "g5.xlarge", "pricing": "spot",
                          "name": "My Job!"})",
                      "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  out = json::parse(res->body);
  EXPECT_EQ(out["filename"], "my-job.tf");
  EXPECT_NE(out["text"].get<std::string>().find("resource \"aws_instance\""), std::string::npos);
  res = client_->Post("/v1/export",
                      R"({"format": "kubernetes", "instance": "g5.xlarge", "serving": true,
                          "replicas": 3})",
                      "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_NE(json::parse(res->body)["text"].get<std::string>().find("replicas: 3"),
            std::string::npos);
}

TEST_F(ServerTest, ExportRefusesBadInputNamingTheField) {
  struct Case {
    const char* body;
    const char* field;
  } cases[] = {
      {R"({"format": "ansible", "instance": "g5.xlarge"})", "format:"},
      {R"({"instance": "g5.xlarge"})", "format:"},
      {R"({"format": "tf"})", "rank:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "rank": 1, "workload": {}})", "rank:"},
      {R"({"format": "tf", "instance": "g5.nonesuch"})", "instance"},
      {R"({"format": "tf", "instance": ""})", "instance:"},
      {R"({"format": "tf", "instance": 7})", "instance:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "pricing": "free"})", "pricing:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "nodes": 0})", "nodes:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "nodes": 2.5})", "nodes:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "replicas": 1e12})", "replicas:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "disk_gb": -1})", "disk_gb:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "serving": "yes"})", "serving:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "options": {}})", "options:"},
      {R"({"format": "tf", "instance": "g5.xlarge", "colour": "blue"})", "colour:"},
      {R"({"format": "tf", "rank": 1, "workload": {"model": "Llama-3.1-8B"}, "region": "x"})",
       "region:"},
      {R"({"format": "tf", "rank": 0, "workload": {"model": "Llama-3.1-8B"}})", "rank:"},
      {R"({"format": "tf", "rank": 999, "workload": {"kind": "lora", "model": "Llama-3.1-8B", "tokens": "5e7"}})",
       "rank: 999 is past"},
      {R"({"format": "tf", "rank": 1, "workload": {"model": "Llama-3.1-8B", "batch": -4}})",
       "workload.batch"},
      {"[1, 2]", "body:"},
      // A refused value is echoed clipped and clean (at most 64 bytes, no control characters).
      {R"({"format": "tf", "instance": "g5.xlarge", "nodes": "\u001b[2J99999999999999999999999999999999999999999999999999999999999999999999"})",
       "nodes: '?[2J999999999999999999999999999999999999999999999999999999999999...' is not"},
  };
  for (const Case& c : cases) {
    auto res = client_->Post("/v1/export", c.body, "application/json");
    ASSERT_TRUE(res) << c.body;
    EXPECT_EQ(res->status, 400) << c.body << " -> " << res->body;
    EXPECT_NE(res->body.find(c.field), std::string::npos) << c.body << " -> " << res->body;
  }
  // A name is free text, but not a way to put control characters or megabytes in a file.
  std::string long_name(300, 'a');
  auto res = client_->Post(
      "/v1/export", R"({"format": "tf", "instance": "g5.xlarge", "name": ")" + long_name + "\"}",
      "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("name:"), std::string::npos);
}

TEST_F(ServerTest, WorkloadFieldsAreTheParsersTable) {
  auto res = client_->Get("/v1/workload-fields");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json out = json::parse(res->body);
  ASSERT_EQ(out["fields"].size(), WorkloadFields().size());
  for (const json& f : out["fields"]) {
    // Every accepted phrase is one a value can be checked against: the parser takes the field.
    Workload w;
    EXPECT_TRUE(SetWorkloadField(&w, f["name"], "").message().find("unknown workload field") ==
                std::string::npos)
        << f["name"];
  }
  EXPECT_EQ(out["fields"][0]["name"], "kind");
  EXPECT_EQ(out["fields"][0]["accepted"].get<std::string>().rfind("one of train", 0), 0u)
      << out["fields"][0]["accepted"];
}

TEST_F(ServerTest, EstimatesAreCalibratedByMeasurements) {
  auto res = client_->Post("/v1/estimate",
                           R"({"workload": {"kind": "train", "model": "ResNet-50", "batch": 128},
                               "hardware": {"gpu": "A10"},
                               "calibration": {"measured": ["2.5 it/s on 1x A10"]}})",
                           "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json doc = json::parse(res->body);
  EXPECT_NEAR(doc["time"]["step_s"].get<double>(), 1 / 2.5, 1e-3);
  EXPECT_NE(doc["calibrated_from"][0].get<std::string>().find("2.5 it/s"), std::string::npos);
  res = client_->Post("/v1/recommend",
                      R"({"workload": {"kind": "train", "model": "ResNet-50"},
                          "calibration": {"measured": ["2.5 parsecs on 1x A10"]}})",
                      "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("calibration.measured[0]"), std::string::npos) << res->body;
  res = client_->Post("/v1/recommend",
                      R"({"workload": {"kind": "train", "model": "ResNet-50"},
                          "calibration": {"probe": {"schema": "x"}}})",
                      "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("calibration.probe"), std::string::npos) << res->body;
}

TEST_F(ServerTest, UnknownRoutes404AndLargeBodies413) {
  auto res = client_->Get("/v2/everything");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_NE(res->body.find("no route"), std::string::npos);
  res = client_->Get("/../etc/passwd");
  EXPECT_EQ(res->status, 404) << "nothing is served from the disk";
  std::string huge(200 * 1024, 'x');
  res = client_->Post("/v1/recommend", huge, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
}

TEST_F(ServerTest, MetricsCountRequestsErrorsAndLatencies) {
  client_->Get("/healthz");
  client_->Get("/nowhere");
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find(
                R"(cloudfit_http_requests_total{method="GET",route="/healthz",status="200"} 1)"),
            std::string::npos)
      << res->body;
  EXPECT_NE(res->body.find(R"(cloudfit_http_errors_total{method="GET",route="unmatched"} 1)"),
            std::string::npos);
  EXPECT_NE(res->body.find("cloudfit_http_request_duration_seconds_bucket"), std::string::npos);
}

TEST_F(ServerTest, ASecondServerOnTheSamePortFailsToBind) {
  ServerOptions o;
  o.port = server_->port();
  ApiServer second(testing::BuiltInCatalog(), o);
  std::string error;
  EXPECT_FALSE(second.Bind(&error)) << "two servers would split the traffic";
  EXPECT_NE(error.find("cannot listen on 127.0.0.1:" + std::to_string(o.port)), std::string::npos)
      << error;
}

// The workers run below the I/O thread's priority, so that health checks and static routes,
// answered by the I/O thread, never wait behind a recommendation for a core.
TEST_F(ServerTest, WorkersRunBelowTheIoThreadsPriority) {
  // A malformed request body is still answered by a worker: one has run and set its priority.
  auto res = client_->Post("/v1/recommend", "{not json", "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 400);
  auto nice_of = [](const std::string& task) {
    std::ifstream stat("/proc/self/task/" + task + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    // After the command name's closing parenthesis: state is field 3, nice field 19.
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 19 && fields >> field; ++i) {
    }
    return std::stoi(field);
  };
  const int base = nice_of(std::to_string(gettid()));
  int lower = 0, same = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    int nice = nice_of(entry.path().filename().string());
    lower += nice > base;
    same += nice == base;
  }
  if (base >= 19) GTEST_SKIP() << "already at the lowest priority";
  EXPECT_GE(lower, 1) << "the workers";
  EXPECT_GE(same, 2) << "this thread and the server's I/O thread";
}

// With --worker-priority idle the workers run under SCHED_IDLE, which the I/O thread preempts
// the moment it wakes; this thread and the I/O thread keep their policy.
TEST_F(ServerTest, IdleWorkerPriorityPutsOnlyTheWorkersUnderSchedIdle) {
  auto idle_threads = [] {
    int idle = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
      pid_t tid = std::stoi(entry.path().filename().string());
      idle += sched_getscheduler(tid) == SCHED_IDLE;
    }
    return idle;
  };
  ASSERT_EQ(idle_threads(), 0) << "the fixture's server keeps its workers at nice +10";
  ServerOptions o;
  o.port = 0;
  o.threads = 3;
  o.worker_priority = ServerOptions::WorkerPriority::kIdle;
  ApiServer idle_server(testing::BuiltInCatalog(), o);
  std::string error;
  ASSERT_TRUE(idle_server.Bind(&error)) << error;
  std::thread serving([&] { idle_server.Serve(); });
  httplib::Client client("127.0.0.1", idle_server.port());
  client.set_read_timeout(30, 0);
  // A worker answers a malformed body: that one at least has set its policy by then.
  auto res = client.Post("/v1/recommend", "{not json", "application/json");
  int idle = idle_threads();
  bool this_thread_idle = sched_getscheduler(0) == SCHED_IDLE;
  idle_server.Stop();
  serving.join();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_GE(idle, 1) << "the idle server's workers";
  EXPECT_LE(idle, 3) << "only the workers, not the I/O thread";
  EXPECT_FALSE(this_thread_idle);
}

TEST_F(ServerTest, ConcurrentRequestsAllAnswered) {
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&] {
      httplib::Client c("127.0.0.1", server_->port());
      c.set_read_timeout(30, 0);
      auto res = c.Post("/v1/recommend", kRecommend, "application/json");
      if (res && res->status == 200) ++ok;
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(ok, 8);
}

}  // namespace
}  // namespace cloudfit
