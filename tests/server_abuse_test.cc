// The server against hostile and careless clients, over real loopback sockets: slow and idle
// clients do not block others, limits hold for every transfer encoding, pipelining works,
// every error is JSON with its status and counted under a route template, handler exceptions
// are 500s, too many connections or requests get 503 at once, and Stop finishes what is in
// flight. Timeouts are set short here so each case takes about a second.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cloudfit/server.h"
#include "server/http_server.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// A client that writes raw bytes, to send what a well-behaved library never would.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawClient() {
    if (fd_ >= 0) close(fd_);
  }
  bool connected() const { return connected_; }
  // Hangs up with a reset, as a client that crashes or times out does.
  void Reset() {
    linger hard{1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
    close(fd_);
    fd_ = -1;
  }

  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }

  // Reads until `pending_` holds one whole response; returns it, or "" on timeout or EOF.
  struct Response {
    int status = 0;
    std::string head;
    std::string body;
  };
  bool Read(Response* out, double timeout_s = 5) {
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(timeout_s));
    while (true) {
      size_t end = pending_.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::string head = pending_.substr(0, end + 4);
        size_t length = 0;
        size_t at = head.find("Content-Length: ");
        if (at != std::string::npos) length = std::stoul(head.substr(at + 16));
        int status = std::stoi(head.substr(9, 3));
        if (status == 100) {  // an interim response: skip it
          pending_.erase(0, end + 4);
          continue;
        }
        if (pending_.size() >= end + 4 + length) {
          out->status = status;
          out->head = head;
          out->body = pending_.substr(end + 4, length);
          pending_.erase(0, end + 4 + length);
          return true;
        }
      }
      if (!Fill(deadline)) return false;
    }
  }

  // True when the server closes the connection within the timeout (EOF or reset).
  bool ClosedWithin(double timeout_s) {
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(timeout_s));
    while (Clock::now() < deadline) {
      if (!Fill(deadline)) return eof_;
    }
    return false;
  }

  // Reads raw bytes until `needle` has appeared `count` times.
  bool ReadUntil(const std::string& needle, int count, double timeout_s = 5) {
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(timeout_s));
    while (true) {
      int seen = 0;
      for (size_t at = pending_.find(needle); at != std::string::npos;
           at = pending_.find(needle, at + 1)) {
        ++seen;
      }
      if (seen >= count) return true;
      if (!Fill(deadline)) return false;
    }
  }

  const std::string& pending() const { return pending_; }

 private:
  bool Fill(Clock::time_point deadline) {
    int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (ms <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return false;
    char buffer[65536];
    ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    pending_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string pending_;
};

std::string Hex(size_t n) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%zx", n);
  return buffer;
}

std::string Get(const std::string& path, const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: t\r\n" + extra + "\r\n";
}

std::string Post(const std::string& path, const std::string& body) {
  return "POST " + path +
         " HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The API server on a free port with two workers and short deadlines.
class AbuseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o;
    o.port = 0;
    o.threads = 2;
    o.max_body_bytes = 64 * 1024;
    o.read_timeout_s = 1;
    o.idle_timeout_s = 1;
    o.write_timeout_s = 1;
    o.max_connections = 300;
    server_ = std::make_unique<ApiServer>(testing::BuiltInCatalog(), o);
    std::string error;
    ASSERT_TRUE(server_->Bind(&error)) << error;
    thread_ = std::thread([this] { server_->Serve(); });
  }
  void TearDown() override {
    server_->Stop();
    thread_.join();
  }
  std::string Metrics() {
    RawClient c(server_->port());
    RawClient::Response r;
    c.Send(Get("/metrics"));
    EXPECT_TRUE(c.Read(&r));
    return r.body;
  }

  std::unique_ptr<ApiServer> server_;
  std::thread thread_;
};

TEST_F(AbuseTest, SlowAndIdleClientsDoNotBlockOthers) {
  // 100 clients trickle half a request line, 100 more sit idle after a request: with two
  // workers, a thread-per-connection server would be stuck; here each fresh client is answered.
  std::vector<std::unique_ptr<RawClient>> slow, idle;
  for (int i = 0; i < 100; ++i) {
    slow.push_back(std::make_unique<RawClient>(server_->port()));
    ASSERT_TRUE(slow.back()->Send("GET /heal"));
    idle.push_back(std::make_unique<RawClient>(server_->port()));
    RawClient::Response r;
    idle.back()->Send(Get("/healthz"));
    ASSERT_TRUE(idle.back()->Read(&r));
  }
  for (int i = 0; i < 20; ++i) {
    RawClient fresh(server_->port());
    RawClient::Response r;
    ASSERT_TRUE(fresh.Send(Post("/v1/estimate",
                                R"({"workload": {"kind": "train", "model": "ResNet-50"},
                                    "hardware": {"gpu": "A100"}})")));
    ASSERT_TRUE(fresh.Read(&r, 10)) << "a fresh client waited behind slow or idle ones";
    EXPECT_EQ(r.status, 200) << r.body;
  }
  // The slow ones get 408 after the header deadline, the idle ones are closed.
  RawClient::Response late;
  ASSERT_TRUE(slow[0]->Read(&late, 5));
  EXPECT_EQ(late.status, 408);
  EXPECT_NE(json::parse(late.body)["error"].get<std::string>().find("headers: not received"),
            std::string::npos);
  EXPECT_TRUE(idle[0]->ClosedWithin(5));
  EXPECT_NE(Metrics().find(R"(route="unrouted",status="408"})"), std::string::npos);
}

TEST_F(AbuseTest, BodyLimitsHoldForEveryTransferEncoding) {
  std::string big(100 * 1024, 'x');
  RawClient declared(server_->port());
  RawClient::Response r;
  declared.Send("POST /v1/recommend HTTP/1.1\r\nHost: t\r\nContent-Length: 100000000\r\n\r\n");
  ASSERT_TRUE(declared.Read(&r));
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos);
  // Chunked used to bypass the limit entirely.
  RawClient chunked(server_->port());
  chunked.Send("POST /v1/recommend HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
  for (int i = 0; i < 10; ++i) {
    if (!chunked.Send("2800\r\n" + std::string(0x2800, 'y') + "\r\n")) break;
  }
  ASSERT_TRUE(chunked.Read(&r));
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(json::parse(r.body)["error"].get<std::string>().find("body: larger than the limit"),
            std::string::npos);
  EXPECT_TRUE(chunked.ClosedWithin(5));
  // Counted under the route it was sent to.
  EXPECT_NE(Metrics().find(R"(method="POST",route="/v1/recommend",status="413"})"),
            std::string::npos);
  // A chunked body within the limit works.
  RawClient ok(server_->port());
  std::string body =
      R"({"workload": {"kind": "train", "model": "ResNet-50"}, "hardware": {"gpu": "A100"}})";
  ok.Send("POST /v1/estimate HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" +
          Hex(body.size()) + "\r\n" + body + "\r\n0\r\n\r\n");
  ASSERT_TRUE(ok.Read(&r));
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(AbuseTest, PipelinedRequestsAreAnsweredInOrder) {
  RawClient c(server_->port());
  std::string estimate =
      R"({"workload": {"kind": "train", "model": "ResNet-50"}, "hardware": {"gpu": "A10"}})";
  ASSERT_TRUE(c.Send(Get("/healthz") + Post("/v1/estimate", estimate) + Get("/nowhere") +
                     Get("/v1/gpus") + Get("/healthz", "Connection: close\r\n")));
  std::vector<int> statuses;
  RawClient::Response r;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(c.Read(&r)) << "response " << i << " never came";
    statuses.push_back(r.status);
    if (i == 1) {
      EXPECT_NE(r.body.find("\"hardware\":\"1x A10\""), std::string::npos) << r.body;
    }
    if (i == 3) {
      EXPECT_NE(r.body.find("cloudfit.gpus/v1"), std::string::npos);
    }
  }
  EXPECT_EQ(statuses, (std::vector<int>{200, 200, 404, 200, 200}));
  EXPECT_TRUE(c.ClosedWithin(5));
}

TEST_F(AbuseTest, EveryErrorIsJsonCountedUnderATemplate) {
  struct Case {
    std::string request;
    int status;
  } cases[] = {
      {Get("/%ff%fe"), 404},  // not UTF-8: aborted the server
      {Get("/" + std::string(20000, 'a')), 414},
      {"GET / HTTP/1.1\r\nHost: t\r\nX: " + std::string(20000, 'b') + "\r\n\r\n", 431},
      {"BREW /pot HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
       400},
      {"GET / HTTP/3.0\r\nHost: t\r\n\r\n", 505},
      {std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), 400},  // TLS hello
      {Post("/v1/recommend", "{\"workload\": \"\xff\"}"), 400},                // was a 500
      {Post("/v1/recommend", std::string(50000, '[')), 400},                   // deep nesting
      {"DELETE /healthz HTTP/1.1\r\nHost: t\r\n\r\n", 405},
  };
  for (const Case& c : cases) {
    RawClient client(server_->port());
    RawClient::Response r;
    client.Send(c.request);
    ASSERT_TRUE(client.Read(&r)) << c.request.substr(0, 60);
    EXPECT_EQ(r.status, c.status) << c.request.substr(0, 60) << "\n" << r.body;
    json body = json::parse(r.body);  // always JSON, always valid UTF-8
    EXPECT_TRUE(body["error"].is_string()) << r.body;
  }
  std::string metrics = Metrics();
  for (int status : {404, 414, 431, 505}) {
    EXPECT_NE(metrics.find("status=\"" + std::to_string(status) + "\"} 1"), std::string::npos)
        << status << "\n"
        << metrics;
  }
  EXPECT_NE(metrics.find(R"(method="DELETE",route="/healthz",status="405"})"), std::string::npos);
  EXPECT_EQ(metrics.find("BREW"), std::string::npos) << "methods are a fixed set of labels";
  EXPECT_EQ(metrics.find("aaaa"), std::string::npos);
}

TEST_F(AbuseTest, MetricLabelsAreRouteTemplatesOnly) {
  // A path written raw into a label let clients forge samples and grow /metrics without bound.
  for (int i = 0; i < 300; ++i) {
    RawClient c(server_->port());
    RawClient::Response r;
    c.Send(Get("/x" + std::to_string(i) + "%22%7D%201e9%0Afake_metric%7B"));
    ASSERT_TRUE(c.Read(&r));
    EXPECT_EQ(r.status, 404);
  }
  std::string metrics = Metrics();
  EXPECT_EQ(metrics.find("fake_metric"), std::string::npos);
  EXPECT_NE(metrics.find(R"(route="unmatched",status="404"} 300)"), std::string::npos) << metrics;
  EXPECT_LT(metrics.size(), 20000u);
}

TEST_F(AbuseTest, TheApiReadsNoFiles) {
  for (const char* path : {"/etc/passwd", "/nonexistent/config.json", "/dev/zero"}) {
    RawClient c(server_->port());
    RawClient::Response r;
    c.Send(Post("/v1/estimate",
                std::string(R"({"workload": {"kind": "inference", "model_config": ")") + path +
                    R"("}, "hardware": {"gpu": "L4"}})"));
    ASSERT_TRUE(c.Read(&r));
    EXPECT_EQ(r.status, 400);
    // The same answer whether the file exists or not: nothing about it leaks.
    EXPECT_EQ(json::parse(r.body)["error"],
              "workload.model_config: expected the config.json object itself (the API reads no "
              "files; send its contents, at most 4 MiB)");
  }
  // Inline, the config works.
  std::string config =
      testing::ReadWholeFile(testing::SourcePath("tests/fixtures/hf/Llama-3.1-8B.json"));
  RawClient c(server_->port());
  RawClient::Response r;
  c.Send(Post("/v1/estimate", R"({"workload": {"kind": "inference", "model_config": )" + config +
                                  R"(}, "hardware": {"gpu": "H100"}})"));
  ASSERT_TRUE(c.Read(&r));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NEAR(json::parse(r.body)["workload"]["params"].get<double>(), 8.03e9, 0.05e9) << r.body;
}

TEST_F(AbuseTest, ConnectionsBeyondTheLimitAreRefusedQuickly) {
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < 300; ++i) {
    held.push_back(std::make_unique<RawClient>(server_->port()));
    held.back()->Send("G");  // counted as open, reading
  }
  // Give the server a moment to accept them all.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  RawClient extra(server_->port());
  RawClient::Response r;
  extra.Send(Get("/healthz"));
  ASSERT_TRUE(extra.Read(&r, 2));
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.head.find("Retry-After: 1"), std::string::npos);
}

TEST_F(AbuseTest, ExpectContinueAndHeadWork) {
  RawClient c(server_->port());
  std::string body =
      R"({"workload": {"kind": "train", "model": "ResNet-50"}, "hardware": {"gpu": "A10"}})";
  c.Send("POST /v1/estimate HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n");
  // The interim 100 arrives before any body is sent.
  ASSERT_TRUE(c.ReadUntil("HTTP/1.1 100 Continue\r\n\r\n", 1));
  c.Send(body);
  RawClient::Response r;
  ASSERT_TRUE(c.Read(&r));
  EXPECT_EQ(r.status, 200);

  // HEAD: the headers of GET, no body on the wire, so the next response follows directly.
  RawClient h(server_->port());
  h.Send("HEAD /healthz HTTP/1.1\r\nHost: t\r\n\r\n" + Get("/healthz"));
  ASSERT_TRUE(h.ReadUntil("{\"status\":\"ok\"}", 1));
  const std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n";
  EXPECT_EQ(h.pending(), head + head + "{\"status\":\"ok\"}");
}

// The HTTP server with an application whose handlers throw or take their time.
class FakeApp : public HttpApplication {
 public:
  HttpRouteMatch Match(const HttpRequest& request) override {
    HttpRouteMatch m;
    m.label = request.path == "/slow" || request.path == "/throw" || request.path == "/big" ||
                      request.path == "/made"
                  ? request.path
                  : "unmatched";
    return m;
  }
  HttpResponse Handle(const HttpRequest& request, const HttpRouteMatch&) override {
    if (request.path == "/throw") throw std::runtime_error("boom");
    HttpResponse r;
    if (request.path == "/slow") {
      ++started;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      r.body = "{\"slow\":true}";
    } else if (request.path == "/big") {
      r.shared_body = BigBody();
    } else if (request.path == "/made") {
      r.body = MadeBody();  // the worker's own bytes, more than a socket takes at once
    } else {
      r.status = 404;
      r.body = "{}";
    }
    return r;
  }
  // 64 MiB, made once by the test before it asks: a worker that filled it itself ran at nice
  // +10 on a busy machine and, faulting in 16,384 fresh pages, could hand the answer over after
  // the test had already waited out the write deadline.
  static std::shared_ptr<const std::string> BigBody() {
    static const auto body = std::make_shared<const std::string>(size_t{64} << 20, 'z');
    return body;
  }
  // 8 MiB that are not all one byte, so a response cut or stitched wrongly shows.
  static std::string MadeBody() {
    std::string body(size_t{8} << 20, ' ');
    for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 23);
    return body;
  }
  void Observe(std::string_view, std::string_view route, int status, double) override {
    std::lock_guard<std::mutex> lock(mu);
    observed.push_back(std::string(route) + " " + std::to_string(status));
  }
  std::string ErrorBody(int status, const std::string& message) override {
    return json{{"error", message}, {"status", status}}.dump();
  }
  std::mutex mu;
  std::vector<std::string> observed;
  std::atomic<int> started{0};
};

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions o) {
    o.port = 0;
    server_ = std::make_unique<HttpServer>(&app_, o);
    std::string error;
    ASSERT_TRUE(server_->Bind(&error)) << error;
    thread_ = std::thread([this] { server_->Serve(); });
  }
  void TearDown() override {
    if (server_) {
      server_->Stop();
      thread_.join();
    }
  }
  FakeApp app_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

TEST_F(HttpServerTest, HandlerExceptionsAre500AndCounted) {
  Start({});
  RawClient c(server_->port());
  RawClient::Response r;
  c.Send(Get("/throw") + Get("/throw"));
  ASSERT_TRUE(c.Read(&r));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(json::parse(r.body)["error"], "internal error: boom");
  ASSERT_TRUE(c.Read(&r)) << "the connection survives a handler's exception";
  EXPECT_EQ(r.status, 500);
  std::lock_guard<std::mutex> lock(app_.mu);
  EXPECT_EQ(std::count(app_.observed.begin(), app_.observed.end(), "/throw 500"), 2);
}

// A worker sends its answer itself. A client that hangs up meanwhile must never see its socket's
// number given to the next client before the worker is done with it: the answer would go to a
// stranger.
TEST_F(HttpServerTest, AWorkersAnswerNeverReachesAnotherConnection) {
  Start({});
  for (int round = 0; round < 3; ++round) {
    {
      RawClient gone(server_->port());
      gone.Send(Get("/slow"));
      while (app_.started == round) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      gone.Reset();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the server sees the reset
    std::vector<std::unique_ptr<RawClient>> others;
    for (int i = 0; i < 4; ++i) others.push_back(std::make_unique<RawClient>(server_->port()));
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // the worker answers
    for (auto& other : others) {
      other->Send(Get("/elsewhere"));
      RawClient::Response r;
      ASSERT_TRUE(other->Read(&r));
      EXPECT_EQ(r.status, 404) << r.body;
      EXPECT_EQ(other->pending(), "") << "nothing but its own answer";
    }
  }
}

TEST_F(HttpServerTest, AFullQueueAnswers503AtOnce) {
  HttpServerOptions o;
  o.workers = 1;
  o.max_queued = 1;
  Start(o);
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<RawClient>(server_->port()));
    clients.back()->Send(Get("/slow"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  int ok = 0, busy = 0;
  for (auto& c : clients) {
    RawClient::Response r;
    ASSERT_TRUE(c->Read(&r, 5));
    ok += r.status == 200;
    busy += r.status == 503;
  }
  EXPECT_EQ(ok, 2) << "one running, one queued";
  EXPECT_EQ(busy, 2);
}

TEST_F(HttpServerTest, StopFinishesRequestsInFlight) {
  Start({});
  RawClient c(server_->port());
  c.Send(Get("/slow"));
  while (app_.started == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server_->Stop();
  RawClient::Response r;
  ASSERT_TRUE(c.Read(&r));
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos);
  thread_.join();
  server_.reset();
}

TEST_F(HttpServerTest, AClientThatDoesNotReadIsClosedAfterTheWriteDeadline) {
  HttpServerOptions o;
  o.write_timeout_s = 0.5;
  Start(o);
  (void)FakeApp::BigBody();
  RawClient c(server_->port());
  c.Send(Get("/big"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // Draining now finds the response cut short: the server gave up on the connection.
  RawClient::Response r;
  EXPECT_FALSE(c.Read(&r, 5));
  EXPECT_LT(c.pending().size(), size_t{64} << 20);
}

// A worker sends what the socket takes and frees a response it sent whole; the rest of a large
// one is the I/O thread's to write, from the bytes the worker made, and the connection goes on.
TEST_F(HttpServerTest, ALargeAnswerIsFinishedByTheIoThreadAndTheConnectionGoesOn) {
  Start({});
  RawClient c(server_->port());
  c.Send(Get("/made"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the worker fills the socket
  RawClient::Response r;
  ASSERT_TRUE(c.Read(&r, 10));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.body == FakeApp::MadeBody()) << "a body of " << r.body.size() << " bytes";
  for (int i = 0; i < 2; ++i) {  // sent whole by the worker or finished by the I/O thread
    c.Send(Get("/throw"));
    ASSERT_TRUE(c.Read(&r));
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(json::parse(r.body)["error"], "internal error: boom");
  }
  EXPECT_EQ(c.pending(), "");
}

TEST_F(HttpServerTest, BodyDeadline) {
  HttpServerOptions o;
  o.body_timeout_s = 0.5;
  Start(o);
  RawClient c(server_->port());
  c.Send("POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n0123456789");
  RawClient::Response r;
  ASSERT_TRUE(c.Read(&r, 5));
  EXPECT_EQ(r.status, 408);
  EXPECT_NE(r.body.find("body: not received"), std::string::npos);
}

}  // namespace
}  // namespace cloudfit
