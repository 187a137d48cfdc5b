#include "refresh/credentials.h"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/file.h"
#include "util/strings.h"

namespace cloudfit::refresh {

namespace fs = std::filesystem;

namespace {

std::string NonEmpty(const std::optional<std::string>& value) {
  return value && !Trim(*value).empty() ? std::string(Trim(*value)) : std::string();
}

// The value of `key` in section `[section]` of an INI file ("" when absent).
std::string IniValue(const std::string& text, const std::string& section, const std::string& key) {
  std::string current;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line = Trim(std::string_view(text).substr(
        start, end == std::string::npos ? std::string::npos : end - start));
    start = end == std::string::npos ? text.size() + 1 : end + 1;
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      current = std::string(Trim(line.substr(1, line.size() - 2)));
      continue;
    }
    size_t eq = line.find('=');
    if (current == section && eq != std::string_view::npos &&
        ToLower(Trim(line.substr(0, eq))) == key) {
      return std::string(Trim(line.substr(eq + 1)));
    }
  }
  return "";
}

std::string HomePath(const CredentialSources& sources, const std::string& relative) {
  return (fs::path(sources.home) / relative).string();
}

}  // namespace

CredentialSources CredentialSources::FromProcess() {
  CredentialSources sources;
  sources.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  const char* home = std::getenv("HOME");
  sources.home = home != nullptr ? home : "";
  return sources;
}

std::optional<std::string> CredentialSources::Env(const std::string& name) const {
  return getenv ? getenv(name) : std::nullopt;
}

Status FindAwsCredentials(const CredentialSources& sources, AwsCredentials* out,
                          std::string* where) {
  std::string id = NonEmpty(sources.Env("AWS_ACCESS_KEY_ID"));
  std::string secret = NonEmpty(sources.Env("AWS_SECRET_ACCESS_KEY"));
  if (!id.empty() && !secret.empty()) {
    *out = AwsCredentials{id, secret, NonEmpty(sources.Env("AWS_SESSION_TOKEN"))};
    *where = "environment (AWS_ACCESS_KEY_ID)";
    return Status::OK();
  }
  std::string path = NonEmpty(sources.Env("AWS_SHARED_CREDENTIALS_FILE"));
  if (path.empty()) path = HomePath(sources, ".aws/credentials");
  std::string profile = NonEmpty(sources.Env("AWS_PROFILE"));
  if (profile.empty()) profile = "default";
  std::string text;
  if (!sources.home.empty() || !NonEmpty(sources.Env("AWS_SHARED_CREDENTIALS_FILE")).empty()) {
    if (ReadFile(path, &text).ok()) {
      id = IniValue(text, profile, "aws_access_key_id");
      secret = IniValue(text, profile, "aws_secret_access_key");
      if (!id.empty() && !secret.empty()) {
        *out = AwsCredentials{id, secret, IniValue(text, profile, "aws_session_token")};
        *where = fmt::format("{} [{}]", path, profile);
        return Status::OK();
      }
    }
  }
  return Status::NotFound(fmt::format(
      "no AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or profile '{}' in {})",
      profile, path));
}

Status FindAlibabaCredentials(const CredentialSources& sources, AlibabaCredentials* out,
                              std::string* where) {
  std::string path = HomePath(sources, ".aliyun/config.json");
  bool ignore_profile = NonEmpty(sources.Env("ALIBABA_CLOUD_IGNORE_PROFILE")) == "TRUE";
  std::string text;
  if (!ignore_profile && !sources.home.empty() && ReadFile(path, &text).ok()) {
    nlohmann::json config = nlohmann::json::parse(text, nullptr, false);
    if (config.is_discarded() || !config.is_object()) {
      return Status::Corruption(path + ": not JSON (the aliyun CLI's configuration file)");
    }
    std::string name = NonEmpty(sources.Env("ALIBABA_CLOUD_PROFILE"));
    if (name.empty()) name = config.value("current", "default");
    for (const nlohmann::json& p : config.value("profiles", nlohmann::json::array())) {
      if (!p.is_object() || p.value("name", "") != name) continue;
      std::string mode = p.value("mode", "AK");
      if (mode != "AK" && mode != "StsToken") {
        return Status::NotFound(fmt::format(
            "{}: profile '{}' uses mode {}; cloudfit reads AK and StsToken profiles", path, name,
            mode));
      }
      out->access_key_id = p.value("access_key_id", "");
      out->access_key_secret = p.value("access_key_secret", "");
      out->security_token = mode == "StsToken" ? p.value("sts_token", "") : "";
      if (!out->access_key_id.empty() && !out->access_key_secret.empty()) {
        *where = fmt::format("{} [{}]", path, name);
        return Status::OK();
      }
    }
  }
  for (const char* prefix : {"ALIBABA_CLOUD_", "ALIBABACLOUD_", "ALICLOUD_"}) {
    std::string p = prefix;
    std::string id = NonEmpty(sources.Env(p + "ACCESS_KEY_ID"));
    std::string secret = NonEmpty(sources.Env(p + "ACCESS_KEY_SECRET"));
    if (id.empty() || secret.empty()) continue;
    *out = AlibabaCredentials{id, secret, NonEmpty(sources.Env(p + "SECURITY_TOKEN"))};
    *where = "environment (" + p + "ACCESS_KEY_ID)";
    return Status::OK();
  }
  return Status::NotFound(fmt::format(
      "no Alibaba Cloud AccessKey ({} or ALIBABA_CLOUD_ACCESS_KEY_ID and "
      "ALIBABA_CLOUD_ACCESS_KEY_SECRET)",
      path));
}

Status FindTencentCredentials(const CredentialSources& sources, TencentCredentials* out,
                              std::string* where) {
  std::string id = NonEmpty(sources.Env("TENCENTCLOUD_SECRET_ID"));
  std::string key = NonEmpty(sources.Env("TENCENTCLOUD_SECRET_KEY"));
  if (!id.empty() && !key.empty()) {
    *out = TencentCredentials{id, key, NonEmpty(sources.Env("TENCENTCLOUD_SESSION_TOKEN"))};
    *where = "environment (TENCENTCLOUD_SECRET_ID)";
    return Status::OK();
  }
  std::string path = HomePath(sources, ".tccli/default.credential");
  std::string text;
  if (!sources.home.empty() && ReadFile(path, &text).ok()) {
    nlohmann::json file = nlohmann::json::parse(text, nullptr, false);
    if (file.is_discarded() || !file.is_object()) {
      return Status::Corruption(path + ": not JSON (tccli's credential file)");
    }
    out->secret_id = file.value("secretId", "");
    out->secret_key = file.value("secretKey", "");
    out->token = file.value("token", "");
    if (!out->secret_id.empty() && !out->secret_key.empty()) {
      *where = path;
      return Status::OK();
    }
  }
  return Status::NotFound(fmt::format(
      "no Tencent Cloud keys (TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY, or {})", path));
}

Status FindGcpApiKey(const CredentialSources& sources, std::string* key, std::string* where) {
  *key = NonEmpty(sources.Env("GOOGLE_API_KEY"));
  if (key->empty()) {
    return Status::NotFound("no GCP API key (set GOOGLE_API_KEY to a key allowed to call the "
                            "Cloud Billing API)");
  }
  *where = "environment (GOOGLE_API_KEY)";
  return Status::OK();
}

}  // namespace cloudfit::refresh
