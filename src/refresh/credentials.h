// Provider credentials, read only from where each provider's own command-line tool reads them
// and never written or printed (only where they came from is reported). Absent credentials are
// NotFound, which a provider turns into "skipped: no credentials", not a failure.
//
//   AWS      AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the shared
//            credentials file (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials), profile
//            AWS_PROFILE or "default" (as the aws CLI reads them)
//   Alibaba  ~/.aliyun/config.json, profile ALIBABA_CLOUD_PROFILE or its "current" one (AK and
//            StsToken modes), unless ALIBABA_CLOUD_IGNORE_PROFILE=TRUE; else
//            ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET / ALIBABA_CLOUD_SECURITY_TOKEN (also with the
//            ALIBABACLOUD_ and ALICLOUD_ prefixes), the aliyun CLI's order
//   Tencent  TENCENTCLOUD_SECRET_ID / TENCENTCLOUD_SECRET_KEY / TENCENTCLOUD_SESSION_TOKEN, else
//            ~/.tccli/default.credential (secretId, secretKey), tccli's order
//   GCP      GOOGLE_API_KEY (an API key restricted to the Cloud Billing API is enough)
#ifndef CLOUDFIT_REFRESH_CREDENTIALS_H_
#define CLOUDFIT_REFRESH_CREDENTIALS_H_

#include <functional>
#include <optional>
#include <string>

#include "cloudfit/status.h"
#include "refresh/signing.h"

namespace cloudfit::refresh {

// Where to look; tests replace both.
struct CredentialSources {
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  std::string home;

  // The process environment and $HOME.
  static CredentialSources FromProcess();
  std::optional<std::string> Env(const std::string& name) const;
};

// Each fills `where` with a description safe to print ("environment", "~/.aws/credentials
// [default]"). NotFound when there are none; Corruption when a file is there but unreadable.
Status FindAwsCredentials(const CredentialSources& sources, AwsCredentials* out,
                          std::string* where);
Status FindAlibabaCredentials(const CredentialSources& sources, AlibabaCredentials* out,
                              std::string* where);
Status FindTencentCredentials(const CredentialSources& sources, TencentCredentials* out,
                              std::string* where);
Status FindGcpApiKey(const CredentialSources& sources, std::string* key, std::string* where);

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_CREDENTIALS_H_
