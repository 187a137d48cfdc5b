// The hashes and encodings the providers' request signatures are built from, over OpenSSL's
// libcrypto (opened at first use, so other commands do not load it; a missing libcrypto.so.3
// throws std::runtime_error saying so).
#ifndef CLOUDFIT_REFRESH_CRYPTO_H_
#define CLOUDFIT_REFRESH_CRYPTO_H_

#include <string>
#include <string_view>

namespace cloudfit::refresh {

// Raw digests (32 or 20 bytes) in a string.
std::string Sha256(std::string_view data);
std::string HmacSha256(std::string_view key, std::string_view data);
std::string HmacSha1(std::string_view key, std::string_view data);

// Lower-case hexadecimal, as SigV4 and TC3 print digests.
std::string HexEncode(std::string_view bytes);
std::string Base64Encode(std::string_view bytes);

// RFC 3986 percent-encoding: unreserved characters (A-Z a-z 0-9 - _ . ~) stay, every other
// byte becomes %XX with upper-case hex. With keep_slash, '/' stays too (URI paths).
std::string PercentEncode(std::string_view text, bool keep_slash = false);

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_CRYPTO_H_
