// libcrypto is opened with dlopen on first use, as libcurl is (curl_http_client.cc): only
// `catalog refresh` signs requests, and linking it made every command pay for loading it (its
// ~4,000 symbol relocations, bound at start because Debian builds it with BIND_NOW, were a
// third of a one-shot's dynamic linking). The signatures come from <openssl/*.h>, whose ABI
// OpenSSL keeps stable within soname 3.
#include "refresh/crypto.h"

#include <dlfcn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <mutex>
#include <stdexcept>

#include "refresh/dynamic_symbol.h"

namespace cloudfit::refresh {

namespace {

struct CryptoApi {
  decltype(&::SHA256) sha256 = nullptr;
  decltype(&::HMAC) hmac = nullptr;
  decltype(&::EVP_sha256) evp_sha256 = nullptr;
  decltype(&::EVP_sha1) evp_sha1 = nullptr;
};

// Loads libcrypto once per process; throws std::runtime_error with the reason when it cannot
// (no request can be signed without it; the program prints the reason and exits).
const CryptoApi& Crypto() {
  static std::once_flag once;
  static CryptoApi api;
  static std::string why_not;
  std::call_once(once, [] {
    void* handle = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      why_not = std::string("cannot load libcrypto (") + (e != nullptr ? e : "libcrypto.so.3") +
                "); install Debian's libssl3 (apt-get install libssl3)";
      return;
    }
    std::string missing;
    bool all = BindSymbol(handle, "SHA256", &api.sha256, &missing);
    all &= BindSymbol(handle, "HMAC", &api.hmac, &missing);
    all &= BindSymbol(handle, "EVP_sha256", &api.evp_sha256, &missing);
    all &= BindSymbol(handle, "EVP_sha1", &api.evp_sha1, &missing);
    if (!all) why_not = "libcrypto lacks " + missing;
  });
  if (!why_not.empty()) throw std::runtime_error(why_not);
  return api;
}

std::string Hmac(const CryptoApi& api, const EVP_MD* md, std::string_view key,
                 std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  api.hmac(md, key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &length);
  return std::string(reinterpret_cast<const char*>(out), length);
}

}  // namespace

std::string Sha256(std::string_view data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  Crypto().sha256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return std::string(reinterpret_cast<const char*>(out), sizeof(out));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  const CryptoApi& api = Crypto();
  return Hmac(api, api.evp_sha256(), key, data);
}

std::string HmacSha1(std::string_view key, std::string_view data) {
  const CryptoApi& api = Crypto();
  return Hmac(api, api.evp_sha1(), key, data);
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (size_t rest = bytes.size() - i; rest > 0) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string PercentEncode(std::string_view text, bool keep_slash) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
  }
  return out;
}

}  // namespace cloudfit::refresh
