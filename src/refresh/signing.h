// Request signing as each provider documents it: AWS Signature Version 4, Tencent Cloud's
// TC3-HMAC-SHA256 and Alibaba Cloud's RPC signature (HMAC-SHA1, signature version 1.0). Each
// is checked against the provider's published example in tests/refresh_signing_test.cc.
// Credentials only ever reach the request headers or query; nothing here logs them.
#ifndef CLOUDFIT_REFRESH_SIGNING_H_
#define CLOUDFIT_REFRESH_SIGNING_H_

#include <map>
#include <string>
#include <string_view>

#include "refresh/http_client.h"

namespace cloudfit::refresh {

struct AwsCredentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // temporary credentials only
};

// Adds X-Amz-Date, X-Amz-Security-Token (with a session token) and Authorization to a request
// whose URL carries the query. `amz_date` is the UTC time as YYYYMMDD'T'HHMMSS'Z'.
void SignAwsV4(const AwsCredentials& credentials, std::string_view region,
               std::string_view service, std::string_view amz_date, HttpRequest* request);

struct TencentCredentials {
  std::string secret_id;
  std::string secret_key;
  std::string token;  // temporary credentials only
};

// Signs a Tencent Cloud API 3.0 POST with a JSON body: sets Content-Type, Host, X-TC-Action,
// X-TC-Version, X-TC-Region, X-TC-Timestamp (and X-TC-Token) and Authorization.
void SignTencentTc3(const TencentCredentials& credentials, std::string_view service,
                    std::string_view action, std::string_view version, std::string_view region,
                    long long timestamp, HttpRequest* request);

struct AlibabaCredentials {
  std::string access_key_id;
  std::string access_key_secret;
  std::string security_token;  // STS credentials only
};

// The signature of an Alibaba Cloud RPC request: Base64(HMAC-SHA1(secret + "&",
// method + "&%2F&" + encode(sorted, encoded query))). `params` are unencoded.
std::string AlibabaRpcSignature(std::string_view method,
                                const std::map<std::string, std::string>& params,
                                std::string_view access_key_secret);

// The canonical (sorted, RFC 3986 encoded) query string of `params`.
std::string CanonicalQuery(const std::map<std::string, std::string>& params);

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_SIGNING_H_
