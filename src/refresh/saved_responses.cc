#include "refresh/saved_responses.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/date.h"
#include "util/file.h"
#include "util/strings.h"

namespace cloudfit::refresh {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifestSchema = "cloudfit.refresh-responses/v1";
constexpr size_t kReplayChunkBytes = size_t{1} << 20;

}  // namespace

Status ReplayHttpClient::Open(const std::string& dir, std::unique_ptr<ReplayHttpClient>* out) {
  std::string text;
  std::string manifest_path = (fs::path(dir) / "manifest.json").string();
  Status s = ReadFile(manifest_path, &text);
  if (!s.ok()) {
    return Status::IOError(fmt::format("--from-dir: {} (a directory written by "
                                       "'catalog refresh --save-responses')",
                                       s.message()));
  }
  nlohmann::json manifest = nlohmann::json::parse(text, nullptr, false);
  if (manifest.is_discarded() || !manifest.is_object() ||
      manifest.value("schema", "") != kManifestSchema || !manifest["responses"].is_array()) {
    return Status::Corruption(fmt::format("{}: not a {} manifest", manifest_path,
                                          kManifestSchema));
  }
  auto client = std::unique_ptr<ReplayHttpClient>(new ReplayHttpClient());
  client->dir_ = dir;
  for (const nlohmann::json& r : manifest["responses"]) {
    Entry e;
    int days = 0;
    if (!r.is_object() || !r["key"].is_string() || !r["status"].is_number_integer() ||
        !r["file"].is_string() || !r["fetched"].is_string() ||
        !ParseIsoDate(r["fetched"].get<std::string>().substr(0, 10), &days)) {
      return Status::Corruption(fmt::format(
          "{}: every response needs key, status, file and fetched (YYYY-MM-DD...)",
          manifest_path));
    }
    std::string file = r["file"].get<std::string>();
    if (file.find("..") != std::string::npos || StartsWith(file, "/")) {
      return Status::Corruption(fmt::format("{}: file '{}' leaves the directory", manifest_path,
                                            file));
    }
    e.status = r["status"].get<int>();
    e.fetched_days = days;
    e.file = file;
    client->entries_[r["key"].get<std::string>()] = e;
  }
  *out = std::move(client);
  return Status::OK();
}

const ReplayHttpClient::Entry* ReplayHttpClient::Find(const HttpRequest& request,
                                                      Status* error) const {
  auto it = entries_.find(request.key());
  if (it == entries_.end()) {
    *error = Status::NotFound(fmt::format("no saved response for {} {} in {}", request.method,
                                          request.display_url(), dir_));
    return nullptr;
  }
  return &it->second;
}

Status ReplayHttpClient::Send(const HttpRequest& request, HttpResponse* response) {
  *response = HttpResponse();
  Status s;
  const Entry* e = Find(request, &s);
  if (e == nullptr) return s;
  s = ReadFile((fs::path(dir_) / e->file).string(), &response->body);
  if (!s.ok()) return s;
  response->status = e->status;
  response->fetched_days = e->fetched_days;
  return Status::OK();
}

Status ReplayHttpClient::Stream(const HttpRequest& request, const BodySink& sink,
                                HttpResponse* response) {
  *response = HttpResponse();
  Status s;
  const Entry* e = Find(request, &s);
  if (e == nullptr) return s;
  response->status = e->status;
  response->fetched_days = e->fetched_days;
  std::string path = (fs::path(dir_) / e->file).string();
  if (!response->ok()) return ReadFile(path, &response->body);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError(path + ": cannot open for reading");
  std::string buffer(kReplayChunkBytes, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    std::streamsize n = in.gcount();
    if (n > 0 && !sink(std::string_view(buffer.data(), static_cast<size_t>(n)))) {
      return Status::Corruption("the reader stopped the transfer");
    }
  }
  if (in.bad()) return Status::IOError(path + ": read failed");
  return Status::OK();
}

RecordingHttpClient::RecordingHttpClient(HttpClient* inner, std::string dir)
    : inner_(inner), dir_(std::move(dir)) {}

std::string RecordingHttpClient::NextFile(const HttpRequest& request) {
  (void)request;
  return fmt::format("{}/{:05d}.body", provider_, ++count_);
}

Status RecordingHttpClient::Record(const HttpRequest& request, const HttpResponse& response,
                                   const std::string& file) {
  nlohmann::json entry = {{"key", request.key()},
                          {"url", request.display_url()},
                          {"status", response.status},
                          {"fetched", FormatIsoDate(response.fetched_days ? response.fetched_days
                                                                          : TodayDays())},
                          {"file", file}};
  manifest_lines_[request.key()] = entry.dump();
  nlohmann::json manifest = {{"schema", kManifestSchema}, {"responses", nlohmann::json::array()}};
  for (const auto& [key, line] : manifest_lines_) {
    manifest["responses"].push_back(nlohmann::json::parse(line));
  }
  return WriteFileAtomically((fs::path(dir_) / "manifest.json").string(), manifest.dump(1) + "\n");
}

Status RecordingHttpClient::Send(const HttpRequest& request, HttpResponse* response) {
  Status s = inner_->Send(request, response);
  if (!s.ok()) return s;
  std::string file = NextFile(request);
  fs::path path = fs::path(dir_) / file;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Status::IOError(fmt::format("{}: {}", path.parent_path().string(), ec.message()));
  s = WriteFileAtomically(path.string(), response->body);
  if (!s.ok()) return s;
  return Record(request, *response, file);
}

Status RecordingHttpClient::Stream(const HttpRequest& request, const BodySink& sink,
                                   HttpResponse* response) {
  std::string file = NextFile(request);
  fs::path path = fs::path(dir_) / file;
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Status::IOError(fmt::format("{}: {}", path.parent_path().string(), ec.message()));
  std::string partial = path.string() + ".part";
  std::ofstream out(partial, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError(partial + ": cannot open for writing");
  BodySink tee = [&](std::string_view chunk) {
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    return sink(chunk);
  };
  Status s = inner_->Stream(request, tee, response);
  if (s.ok() && !response->ok()) out << response->body;
  out.close();
  if (!s.ok() || !out) {
    fs::remove(partial, ec);
    return s.ok() ? Status::IOError(partial + ": write failed") : s;
  }
  fs::rename(partial, path, ec);
  if (ec) return Status::IOError(fmt::format("{}: {}", path.string(), ec.message()));
  return Record(request, *response, file);
}

}  // namespace cloudfit::refresh
