#include "refresh/signing.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "refresh/crypto.h"
#include "util/date.h"
#include "util/strings.h"

namespace cloudfit::refresh {

namespace {

struct UrlParts {
  std::string host;
  std::string path = "/";
  std::string query;
};

UrlParts SplitUrl(std::string_view url) {
  UrlParts parts;
  size_t scheme = url.find("://");
  std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
  size_t slash = rest.find_first_of("/?");
  parts.host = std::string(rest.substr(0, slash));
  if (slash == std::string_view::npos) return parts;
  rest = rest.substr(slash);
  size_t question = rest.find('?');
  std::string_view path = rest.substr(0, question);
  if (!path.empty()) parts.path = std::string(path);
  if (question != std::string_view::npos) parts.query = std::string(rest.substr(question + 1));
  return parts;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && HexValue(text[i + 1]) >= 0 &&
        HexValue(text[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// SigV4's canonical query: each name and value decoded, re-encoded per RFC 3986, sorted by
// name then value.
std::string AwsCanonicalQuery(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& item : SplitList(query, '&')) {
    size_t eq = item.find('=');
    std::string name = PercentDecode(item.substr(0, eq));
    std::string value = eq == std::string::npos ? "" : PercentDecode(item.substr(eq + 1));
    pairs.emplace_back(PercentEncode(name), PercentEncode(value));
  }
  std::sort(pairs.begin(), pairs.end());
  std::string out;
  for (const auto& [name, value] : pairs) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

}  // namespace

void SignAwsV4(const AwsCredentials& credentials, std::string_view region,
               std::string_view service, std::string_view amz_date, HttpRequest* request) {
  UrlParts url = SplitUrl(request->url);
  request->headers.emplace_back("X-Amz-Date", std::string(amz_date));
  if (!credentials.session_token.empty()) {
    request->headers.emplace_back("X-Amz-Security-Token", credentials.session_token);
  }
  // Host, then every header already on the request, lower-cased and sorted.
  std::vector<std::pair<std::string, std::string>> signed_headers = {{"host", url.host}};
  for (const auto& [name, value] : request->headers) {
    signed_headers.emplace_back(ToLower(name), std::string(Trim(value)));
  }
  std::sort(signed_headers.begin(), signed_headers.end());
  std::string canonical_headers;
  std::string header_names;
  for (const auto& [name, value] : signed_headers) {
    canonical_headers += name + ":" + value + "\n";
    header_names += (header_names.empty() ? "" : ";") + name;
  }
  std::string canonical_request =
      fmt::format("{}\n{}\n{}\n{}\n{}\n{}", request->method,
                  PercentEncode(PercentDecode(url.path), true), AwsCanonicalQuery(url.query),
                  canonical_headers, header_names, HexEncode(Sha256(request->body)));
  std::string date(amz_date.substr(0, 8));
  std::string scope = fmt::format("{}/{}/{}/aws4_request", date, region, service);
  std::string string_to_sign = fmt::format("AWS4-HMAC-SHA256\n{}\n{}\n{}", amz_date, scope,
                                           HexEncode(Sha256(canonical_request)));
  std::string key = HmacSha256("AWS4" + credentials.secret_access_key, date);
  key = HmacSha256(key, region);
  key = HmacSha256(key, service);
  key = HmacSha256(key, "aws4_request");
  std::string signature = HexEncode(HmacSha256(key, string_to_sign));
  request->headers.emplace_back(
      "Authorization",
      fmt::format("AWS4-HMAC-SHA256 Credential={}/{}, SignedHeaders={}, Signature={}",
                  credentials.access_key_id, scope, header_names, signature));
}

void SignTencentTc3(const TencentCredentials& credentials, std::string_view service,
                    std::string_view action, std::string_view version, std::string_view region,
                    long long timestamp, HttpRequest* request) {
  static constexpr const char* kContentType = "application/json; charset=utf-8";
  UrlParts url = SplitUrl(request->url);
  std::string canonical_request =
      fmt::format("POST\n/\n\ncontent-type:{}\nhost:{}\n\ncontent-type;host\n{}", kContentType,
                  url.host, HexEncode(Sha256(request->body)));
  // The credential scope's date is the UTC date of the timestamp.
  std::string date = FormatIsoDate(static_cast<int>(timestamp / 86400));
  std::string scope = fmt::format("{}/{}/tc3_request", date, service);
  std::string string_to_sign = fmt::format("TC3-HMAC-SHA256\n{}\n{}\n{}", timestamp, scope,
                                           HexEncode(Sha256(canonical_request)));
  std::string key = HmacSha256("TC3" + credentials.secret_key, date);
  key = HmacSha256(key, service);
  key = HmacSha256(key, "tc3_request");
  std::string signature = HexEncode(HmacSha256(key, string_to_sign));
  request->method = "POST";
  request->headers.emplace_back(
      "Authorization",
      fmt::format("TC3-HMAC-SHA256 Credential={}/{}, SignedHeaders=content-type;host, "
                  "Signature={}",
                  credentials.secret_id, scope, signature));
  request->headers.emplace_back("Content-Type", kContentType);
  request->headers.emplace_back("Host", url.host);
  request->headers.emplace_back("X-TC-Action", std::string(action));
  request->headers.emplace_back("X-TC-Timestamp", std::to_string(timestamp));
  request->headers.emplace_back("X-TC-Version", std::string(version));
  request->headers.emplace_back("X-TC-Region", std::string(region));
  if (!credentials.token.empty()) request->headers.emplace_back("X-TC-Token", credentials.token);
}

std::string CanonicalQuery(const std::map<std::string, std::string>& params) {
  std::string out;
  for (const auto& [name, value] : params) {  // std::map keeps them sorted by name
    if (!out.empty()) out += '&';
    out += PercentEncode(name) + "=" + PercentEncode(value);
  }
  return out;
}

std::string AlibabaRpcSignature(std::string_view method,
                                const std::map<std::string, std::string>& params,
                                std::string_view access_key_secret) {
  std::string string_to_sign =
      fmt::format("{}&{}&{}", method, PercentEncode("/"), PercentEncode(CanonicalQuery(params)));
  return Base64Encode(HmacSha1(std::string(access_key_secret) + "&", string_to_sign));
}

}  // namespace cloudfit::refresh
