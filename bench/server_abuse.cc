// Load and abuse test of `cloudfit serve`, over loopback only and bounded in time. It starts
// the real binary and, while sampling the server's resident memory:
//   1. slow clients: --slow connections trickle a request line a byte at a time (slowloris)
//      while a normal client times /healthz; each slow one must get 408 at the read deadline;
//   2. oversized bodies: a declared 100 MB body must get 413 at once; chunked bodies of 16 MB
//      from 8 clients at a time must get 413 before the server holds them;
//   3. malformed requests: a dozen kinds, each 50 times: every answer a 4xx/5xx with a JSON body;
//   4. load: --requests keep-alive requests over --connections clients (mostly /healthz, some
//      /v1/gpus, POST /v1/estimate and 404s): throughput, latency percentiles, RSS over time;
// then checks /metrics stayed small and SIGTERM stops the server cleanly. Prints the figures and
// exits 1 when any expectation fails.
//
//   server_abuse --cloudfit build/cloudfit [--requests 1000000] [--connections 32] [--slow 200]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string cloudfit = "cloudfit";
  long requests = 1000000;
  int connections = 32;
  int slow = 200;
  double read_timeout_s = 2;
  double max_seconds = 900;
};

int failures = 0;

void Expect(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::printf("FAILED: %s\n", what.c_str());
  }
}

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// --- The server process ------------------------------------------------------------------------

struct Server {
  pid_t pid = -1;
  int port = 0;
};

Server StartServer(const Options& o) {
  int out[2];
  if (pipe(out) != 0) std::exit(2);
  Server s;
  s.pid = fork();
  if (s.pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    std::string timeout = std::to_string(o.read_timeout_s);
    execl(o.cloudfit.c_str(), o.cloudfit.c_str(), "serve", "--port", "0", "--read-timeout",
          timeout.c_str(), "--idle-timeout", "5", static_cast<char*>(nullptr));
    std::perror("exec");
    _exit(127);
  }
  close(out[1]);
  std::string line;
  char c;
  while (read(out[0], &c, 1) == 1 && c != '\n') line += c;
  close(out[0]);
  size_t colon = line.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "server_abuse: the server did not start: '%s'\n", line.c_str());
    std::exit(2);
  }
  s.port = std::atoi(line.c_str() + colon + 1);
  return s;
}

bool Alive(const Server& s) { return kill(s.pid, 0) == 0; }

long RssKib(const Server& s) {
  std::ifstream status("/proc/" + std::to_string(s.pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

// Samples the server's RSS every 100 ms while alive; keeps the largest.
class RssSampler {
 public:
  explicit RssSampler(const Server& s) : server_(s), thread_([this] { Run(); }) {}
  ~RssSampler() {
    done_ = true;
    thread_.join();
  }
  long peak() const { return peak_; }

 private:
  void Run() {
    while (!done_) {
      peak_ = std::max(peak_.load(), RssKib(server_));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  const Server& server_;
  std::atomic<bool> done_{false};
  std::atomic<long> peak_{0};
  std::thread thread_;
};

// --- A blocking client ---------------------------------------------------------------------------

class Client {
 public:
  Client(int port, double timeout_s) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{static_cast<time_t>(timeout_s),
               static_cast<suseconds_t>((timeout_s - static_cast<long>(timeout_s)) * 1e6)};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    int yes = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~Client() { close(fd_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (ok_ && !send_failed_ && sent < bytes.size()) {
      ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        send_failed_ = true;
        return false;
      }
      sent += static_cast<size_t>(n);
    }
    return ok_ && !send_failed_;
  }

  // One response: its status (0 on timeout or close) and body. A failed send does not stop it:
  // a server that refuses a body answers, then closes, and the answer is still to be read.
  int Read(std::string* body = nullptr) {
    while (ok_) {
      size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t length = 0;
        size_t at = buffer_.find("Content-Length: ");
        if (at != std::string::npos && at < end) length = std::strtoul(buffer_.c_str() + at + 16, nullptr, 10);
        if (buffer_.size() >= end + 4 + length) {
          int status = std::atoi(buffer_.c_str() + 9);
          if (body) *body = buffer_.substr(end + 4, length);
          buffer_.erase(0, end + 4 + length);
          if (status == 100) continue;
          return status;
        }
      }
      char chunk[65536];
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) return ok_ = false;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    return 0;
  }

  bool ok() const { return ok_; }
  // Whether a response (or a close) is waiting to be read, without waiting for one.
  bool Readable() {
    if (!buffer_.empty()) return true;
    pollfd p{fd_, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
  bool send_failed_ = false;
  std::string buffer_;
};

std::string Get(const std::string& path) { return "GET " + path + " HTTP/1.1\r\nHost: b\r\n\r\n"; }

std::string Post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

double Percentile(std::vector<float> v, double p) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

// --- Phases --------------------------------------------------------------------------------------

void SlowClients(const Server& server, const Options& o) {
  std::vector<std::unique_ptr<Client>> slow;
  for (int i = 0; i < o.slow; ++i) {
    slow.push_back(std::make_unique<Client>(server.port, o.read_timeout_s + 5));
    slow.back()->Send("GET /hea");
  }
  // Trickle one byte per connection every 200 ms until the deadline passes.
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop) {
      for (auto& c : slow) c->Send("l");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::vector<float> latencies;
  Client normal(server.port, 5);
  for (int i = 0; i < 2000; ++i) {
    auto start = Clock::now();
    normal.Send(Get("/healthz"));
    if (normal.Read() != 200) break;
    latencies.push_back(static_cast<float>(Since(start) * 1e3));
  }
  stop = true;
  trickle.join();
  int timed_out = 0;
  for (auto& c : slow) timed_out += c->Read() == 408;
  std::printf("slow clients:      %d trickling a byte per 200 ms; /healthz meanwhile p50 %.3f ms, "
              "p99 %.3f ms (%zu requests); %d of %d got 408 at the %.0f s deadline\n",
              o.slow, Percentile(latencies, 0.5), Percentile(latencies, 0.99), latencies.size(),
              timed_out, o.slow, o.read_timeout_s);
  Expect(latencies.size() == 2000, "a normal client is answered while slow ones trickle");
  Expect(timed_out == o.slow, "every slow client gets 408");
}

void OversizedBodies(const Server& server) {
  auto start = Clock::now();
  int refused = 0;
  for (int i = 0; i < 200; ++i) {
    Client c(server.port, 5);
    c.Send("POST /v1/recommend HTTP/1.1\r\nHost: b\r\nContent-Length: 104857600\r\n\r\n");
    refused += c.Read() == 413;
  }
  double declared_ms = Since(start) * 1e3 / 200;
  std::atomic<int> chunked_refused{0};
  std::atomic<long> chunked_sent{0};
  RssSampler rss(server);
  start = Clock::now();
  std::vector<std::thread> senders;
  for (int t = 0; t < 8; ++t) {
    senders.emplace_back([&] {
      for (int round = 0; round < 4; ++round) {
        Client c(server.port, 5);
        c.Send("POST /v1/recommend HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\n");
        std::string chunk = "10000\r\n";
        chunk.append(0x10000, 'x').append("\r\n");
        // Stop sending once the server has answered, as a client reading its socket would.
        for (int k = 0; k < 256 && !c.Readable() && c.Send(chunk); ++k) chunked_sent += 0x10000;
        chunked_refused += c.Read() == 413;
      }
    });
  }
  for (std::thread& t : senders) t.join();
  std::printf("oversized bodies:  200 declaring 100 MB: %d x 413, %.2f ms each; 32 chunked "
              "16 MB bodies (8 at a time): %d x 413 after %.1f MB sent in all, server RSS peak "
              "%.1f MB (%.1f s)\n",
              refused, declared_ms, chunked_refused.load(), chunked_sent / 1048576.0,
              rss.peak() / 1024.0, Since(start));
  Expect(refused == 200, "a declared oversized body is 413");
  Expect(chunked_refused == 32, "a chunked oversized body is 413");
  Expect(rss.peak() < 200 * 1024, "oversized bodies are not held (RSS under 200 MB)");
}

void MalformedRequests(const Server& server) {
  // Built with append: `"literal" + std::string(n, c)` trips GCC 12's -Wrestrict false positive.
  std::string long_target = "/", long_header = "GET / HTTP/1.1\r\nHost: b\r\nX: ";
  long_target.append(20000, 'a');
  long_header.append(100000, 'b').append("\r\n\r\n");
  static const char kNul[] = "GET / HTTP/1.1\r\nHost: b\r\nX: a\0b\r\n\r\n";
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"binary noise", std::string("\x16\x03\x01\x02\x00\x01\xfc", 7)},
      {"no Host", "GET / HTTP/1.1\r\n\r\n"},
      {"length and chunked", "POST /v1/estimate HTTP/1.1\r\nHost: b\r\nContent-Length: 3\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
      {"bad chunk size", "POST /v1/estimate HTTP/1.1\r\nHost: b\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"},
      {"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"},
      {"20 KB target", Get(long_target)},
      {"100 KB header", long_header},
      {"control byte in header", std::string(kNul, sizeof(kNul) - 1)},
      {"not UTF-8 body", Post("/v1/recommend", "{\"workload\": \"\xff\xfe\"}")},
      {"deep JSON", Post("/v1/recommend", std::string(60000, '['))},
      {"bad percent-encoding", Get("/v1/instances?gpu=%zz")},
      {"not UTF-8 path", Get("/%ff%c0%af")},
  };
  std::map<int, int> statuses;
  int not_json = 0;
  for (const auto& [name, request] : kinds) {
    for (int i = 0; i < 50; ++i) {
      Client c(server.port, 5);
      c.Send(request);
      std::string body;
      int status = c.Read(&body);
      ++statuses[status];
      not_json += body.rfind("{\"error\":", 0) != 0;
    }
  }
  std::string counts;
  for (const auto& [status, n] : statuses) {
    char count[48];
    std::snprintf(count, sizeof(count), " %d x %d;", n, status);
    counts += count;
  }
  std::printf("malformed:         %zu kinds x 50:%s %d answers not JSON errors\n", kinds.size(),
              counts.c_str(), not_json);
  Expect(statuses.count(0) == 0, "every malformed request is answered");
  Expect(not_json == 0, "every error answer is JSON");
  for (const auto& [status, n] : statuses) Expect(status >= 400, "malformed requests are errors");
}

void Load(const Server& server, const Options& o) {
  const std::string estimate = Post(
      "/v1/estimate", R"({"workload": {"kind": "train", "model": "ResNet-50"}, "hardware": {"gpu": "A100"}})");
  std::atomic<long> next{0}, unexpected{0};
  std::vector<std::vector<float>> latencies(static_cast<size_t>(o.connections));
  std::vector<std::pair<double, long>> rss;  // (seconds, KiB)
  long rss_start = RssKib(server);
  auto start = Clock::now();
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    while (!done) {
      rss.emplace_back(Since(start), RssKib(server));
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  std::vector<std::thread> clients;
  for (int t = 0; t < o.connections; ++t) {
    clients.emplace_back([&, t] {
      auto c = std::make_unique<Client>(server.port, 10);
      std::vector<float>& mine = latencies[static_cast<size_t>(t)];
      for (long i = next++; i < o.requests && Since(start) < o.max_seconds; i = next++) {
        int kind = static_cast<int>(i % 100);
        const std::string request = kind < 94 ? Get("/healthz")
                                    : kind < 97 ? Get("/v1/gpus")
                                    : kind < 99 ? estimate
                                                : Get("/nope");
        int want = kind < 99 ? 200 : 404;
        auto sent = Clock::now();
        c->Send(request);
        int status = c->Read();
        if (status != want) {
          ++unexpected;
          c = std::make_unique<Client>(server.port, 10);  // reconnect and go on
          continue;
        }
        if (i % 4 == 0) mine.push_back(static_cast<float>(Since(sent) * 1e3));
      }
    });
  }
  for (std::thread& t : clients) t.join();
  double seconds = Since(start);
  done = true;
  sampler.join();
  std::vector<float> all;
  for (auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
  long done_requests = std::min(next.load(), o.requests);
  long rss_end = RssKib(server), rss_max = 0;
  for (const auto& [t, kib] : rss) rss_max = std::max(rss_max, kib);
  std::printf("load:              %ld requests over %d keep-alive connections in %.1f s = %.0f "
              "requests/s; latency p50 %.3f ms, p99 %.3f ms, max %.1f ms; %ld unexpected\n",
              done_requests, o.connections, seconds, done_requests / seconds,
              Percentile(all, 0.5), Percentile(all, 0.99),
              all.empty() ? 0.0 : *std::max_element(all.begin(), all.end()), unexpected.load());
  std::string samples;
  size_t step = std::max<size_t>(1, rss.size() / 8);
  for (size_t i = 0; i < rss.size(); i += step) {
    char sample[64];
    std::snprintf(sample, sizeof(sample), " %ds:%ldMB", static_cast<int>(rss[i].first),
                  rss[i].second / 1024);
    samples += sample;
  }
  std::printf("load RSS:          start %.1f MB, max %.1f MB, end %.1f MB; samples%s\n",
              rss_start / 1024.0, rss_max / 1024.0, rss_end / 1024.0, samples.c_str());
  Expect(done_requests == o.requests, "every request was sent within the time bound");
  Expect(unexpected == 0, "every request got its expected status");
  Expect(rss_end - rss_start < 64 * 1024, "RSS stays flat (under 64 MB of growth)");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--cloudfit") o.cloudfit = value;
    else if (flag == "--requests") o.requests = std::atol(value.c_str());
    else if (flag == "--connections") o.connections = std::atoi(value.c_str());
    else if (flag == "--slow") o.slow = std::atoi(value.c_str());
    else if (flag == "--read-timeout") o.read_timeout_s = std::atof(value.c_str());
    else if (flag == "--max-seconds") o.max_seconds = std::atof(value.c_str());
    else {
      std::fprintf(stderr, "server_abuse: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  Server server = StartServer(o);
  std::printf("server:            pid %d, port %d, RSS at start %.1f MB\n", server.pid,
              server.port, RssKib(server) / 1024.0);
  SlowClients(server, o);
  Expect(Alive(server), "the server survives slow clients");
  OversizedBodies(server);
  Expect(Alive(server), "the server survives oversized bodies");
  MalformedRequests(server);
  Expect(Alive(server), "the server survives malformed requests");
  Load(server, o);
  Expect(Alive(server), "the server survives the load");
  Client metrics(server.port, 5);
  std::string body;
  metrics.Send(Get("/metrics"));
  Expect(metrics.Read(&body) == 200, "/metrics answers");
  long lines = std::count(body.begin(), body.end(), '\n');
  std::printf("metrics:           %ld lines, %.1f KB after everything above\n", lines,
              body.size() / 1024.0);
  Expect(lines < 1000, "/metrics stays small: labels are route templates");
  kill(server.pid, SIGTERM);
  int status = 0;
  waitpid(server.pid, &status, 0);
  Expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "SIGTERM stops the server cleanly");
  std::printf("%s\n", failures == 0 ? "all expectations met" : "SOME EXPECTATIONS FAILED");
  return failures == 0 ? 0 : 1;
}
