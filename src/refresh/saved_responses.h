// Provider responses kept in a directory: `catalog refresh --save-responses DIR` records every
// answer as it arrives, `--from-dir DIR` replays them, so a machine behind a proxy can import
// what another fetched. Only bodies, the HTTP status and the fetch date are kept: never the
// request headers, which carry keys and signatures.
//
// Layout: DIR/manifest.json lists {key, url, status, fetched, file}; each body is a file under
// DIR/<provider>/.
#ifndef CLOUDFIT_REFRESH_SAVED_RESPONSES_H_
#define CLOUDFIT_REFRESH_SAVED_RESPONSES_H_

#include <map>
#include <memory>
#include <string>

#include "refresh/http_client.h"

namespace cloudfit::refresh {

// Answers from a saved directory. A request that was not saved is NotFound, naming it.
class ReplayHttpClient : public HttpClient {
 public:
  static Status Open(const std::string& dir, std::unique_ptr<ReplayHttpClient>* out);
  Status Send(const HttpRequest& request, HttpResponse* response) override;
  Status Stream(const HttpRequest& request, const BodySink& sink, HttpResponse* response) override;

 private:
  struct Entry {
    int status = 0;
    int fetched_days = 0;
    std::string file;
  };
  const Entry* Find(const HttpRequest& request, Status* error) const;

  std::string dir_;
  std::map<std::string, Entry> entries_;  // by request key
};

// Passes requests to `inner` and writes each answer to `dir` (bodies streamed to disk as they
// arrive). The manifest is rewritten atomically after every response, so an interrupted run
// leaves a usable partial directory.
class RecordingHttpClient : public HttpClient {
 public:
  // Bodies go to DIR/<provider>/, the provider named by set_provider.
  RecordingHttpClient(HttpClient* inner, std::string dir);
  void set_provider(const std::string& provider) { provider_ = provider; }
  Status Send(const HttpRequest& request, HttpResponse* response) override;
  Status Stream(const HttpRequest& request, const BodySink& sink, HttpResponse* response) override;

 private:
  Status Record(const HttpRequest& request, const HttpResponse& response, const std::string& file);
  std::string NextFile(const HttpRequest& request);

  HttpClient* inner_;
  std::string dir_;
  std::string provider_ = "misc";
  int count_ = 0;
  std::map<std::string, std::string> manifest_lines_;  // key -> JSON object text
};

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_SAVED_RESPONSES_H_
