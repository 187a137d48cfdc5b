// cloudfit serve: the HTTP API and the web page. SIGTERM or SIGINT stops it after the requests
// in flight are answered.
#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/cli_common.h"
#include "cloudfit/server.h"

namespace cloudfit::cli {

namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

void OnSignal(int) { g_stop_requested = 1; }

void Run(const GlobalOptions& global, const ServerOptions& options) {
  if (options.port < 0 || options.port > 65535) throw CliError{"--port: must be in [0, 65535]"};
  if (options.threads < 0 || options.threads > 256)
    throw CliError{"--threads: must be in [0, 256]"};
  Catalog catalog = LoadCatalogOrThrow(global);
  ApiServer server(catalog, options);
  std::string error;
  if (!server.Bind(&error)) throw CliError{"--port: " + error};
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  // Signal handlers may only set a flag; a watcher turns it into a graceful stop.
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done) {
      if (g_stop_requested) {
        server.Stop();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  bool idle = options.worker_priority == ServerOptions::WorkerPriority::kIdle;
  std::cout << fmt::format("cloudfit serving http://{}:{}/ ({} workers at {}; SIGTERM stops)\n",
                           options.host, server.port(), server.workers(),
                           idle ? "SCHED_IDLE" : "nice +10")
            << std::flush;
  server.Serve();
  done = true;
  watcher.join();
  std::cout << "cloudfit: stopped\n";
}

}  // namespace

void AddServeCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<ServerOptions>();
  auto body_kib = std::make_shared<size_t>(1024);
  auto worker_priority = std::make_shared<std::string>("low");
  CLI::App* c = app->add_subcommand("serve", "HTTP JSON API and web page over the same engine");
  c->add_option("--host", options->host, "Address to bind (127.0.0.1 keeps it local)")
      ->capture_default_str();
  c->add_option("--port", options->port, "Port (0 picks a free one)")
      ->check(WholeIn(0, 65535))
      ->capture_default_str();
  c->add_option("--threads", options->threads, "Worker threads (0 = one per CPU core)")
      ->check(WholeIn(0, 256))
      ->capture_default_str();
  // Up to 1 GiB: checked as text before the multiplication by 1024 below can wrap.
  c->add_option("--max-body-kib", *body_kib, "Largest request body, KiB")
      ->check(WholeIn(1, 1 << 20, "KiB"))
      ->capture_default_str();
  c->add_option("--read-timeout", options->read_timeout_s,
                "Seconds a client has for a request's headers, then again for its body (408 after)")
      ->check(NumberIn(0.1, 3600, "s"))
      ->capture_default_str();
  c->add_option("--idle-timeout", options->idle_timeout_s,
                "Seconds a keep-alive connection may wait for its next request")
      ->check(NumberIn(0.1, 3600, "s"))
      ->capture_default_str();
  c->add_option("--max-connections", options->max_connections,
                "Open connections at most; more get 503 at once")
      ->check(WholeIn(1, 1000000))
      ->capture_default_str();
  c->add_option("--worker-priority", *worker_priority,
                "How workers yield the cores to the I/O thread (connections, health checks): low "
                "(nice +10) or idle (SCHED_IDLE: preempted at once, but run only on CPU nothing "
                "else wants; for a container or machine of its own)")
      ->check(CLI::IsMember({"low", "idle"}))
      ->capture_default_str();
  c->callback([global, options, body_kib, worker_priority]() {
    options->max_body_bytes = *body_kib * 1024;
    options->worker_priority = *worker_priority == "idle" ? ServerOptions::WorkerPriority::kIdle
                                                          : ServerOptions::WorkerPriority::kLow;
    Run(*global, *options);
  });
}

}  // namespace cloudfit::cli
