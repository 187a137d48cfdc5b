// An incremental HTTP/1.1 request parser (RFC 9112): bytes in, one request out, or the status
// that refuses it. It does no I/O and keeps no global state, so the server's event loop and the
// fuzz harness drive the very same code.
//
// Every limit is checked as the bytes arrive, before they are held: the request line (414), the
// header section and header count (431), and the body (413) whether its length is declared or
// it comes in chunks. Content-Length together with Transfer-Encoding, codings other than
// chunked, obsolete line folding and a missing Host are refused (400 or 501), which closes the
// doors request smuggling uses. Bytes after a complete request are left unconsumed: they are the
// next pipelined request.
#ifndef CLOUDFIT_SERVER_HTTP_PARSER_H_
#define CLOUDFIT_SERVER_HTTP_PARSER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cloudfit {

struct HttpLimits {
  size_t max_request_line_bytes = 8 * 1024;  // method, target and version; 414 beyond
  size_t max_header_bytes = 16 * 1024;       // the whole header section; 431 beyond
  size_t max_headers = 64;                   // header fields; 431 beyond
  size_t max_body_bytes = 1 << 20;           // after dechunking; 413 beyond
};

struct HttpRequest {
  std::string method;
  std::string target;  // as sent: "/v1/instances?gpu=H100"
  std::string path;    // the target's path, percent-decoded: any bytes, UTF-8 or not
  std::string query;   // after '?', still encoded
  int minor_version = 1;  // HTTP/1.0 or HTTP/1.1
  // Field names in lower case, values trimmed, in the order sent.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool keep_alive = true;        // false after "Connection: close", or HTTP/1.0 without keep-alive
  bool expect_continue = false;  // "Expect: 100-continue"

  // The first value of a header field (name in lower case), or nullptr.
  const std::string* Header(std::string_view name) const;
};

class HttpRequestParser {
 public:
  enum class State {
    kHeaders,   // reading the request line and header fields
    kBody,      // headers are complete; reading the body
    kComplete,  // request() holds a whole request
    kError,     // refused: error_status() and error_message() say why
  };

  explicit HttpRequestParser(HttpLimits limits = {});

  // Consumes bytes up to the end of one request (or of an error) and returns how many; the
  // caller keeps the rest for the next request. Feeding in kComplete or kError consumes nothing.
  size_t Feed(std::string_view data);

  State state() const { return state_; }
  const HttpRequest& request() const { return request_; }
  HttpRequest& mutable_request() { return request_; }
  // 400, 413, 414, 417, 431, 501 or 505 in kError.
  int error_status() const { return error_status_; }
  const std::string& error_message() const { return error_message_; }
  // Bytes of this request received so far (header section and body as sent).
  size_t bytes_received() const { return bytes_received_; }

  // Ready for the next request on the same connection.
  void Reset();

 private:
  size_t FeedHeaders(std::string_view data);
  size_t FeedBody(std::string_view data);
  size_t FeedChunked(std::string_view data);
  bool ParseHeaderSection();
  bool ParseRequestLine(std::string_view line);
  void Fail(int status, std::string message);
  void Finish();

  enum class ChunkState { kSize, kData, kDataEnd, kTrailer };

  HttpLimits limits_;
  State state_ = State::kHeaders;
  HttpRequest request_;
  std::string header_bytes_;  // the header section as received, until its blank line
  size_t line_start_ = 0;     // where the header line being received begins in header_bytes_
  size_t method_scan_ = 0;    // how much of the method has been checked to be a token
  bool method_done_ = false;
  size_t bytes_received_ = 0;
  // Body framing.
  bool chunked_ = false;
  size_t content_length_ = 0;
  ChunkState chunk_state_ = ChunkState::kSize;
  std::string chunk_line_;  // a chunk-size line or trailer line being read
  size_t chunk_left_ = 0;
  size_t trailer_bytes_ = 0;
  int error_status_ = 0;
  std::string error_message_;
};

// Percent-decodes `text` (and '+' as a space when `plus_is_space`). False on a '%' not followed
// by two hex digits.
bool PercentDecode(std::string_view text, bool plus_is_space, std::string* out);

// Splits a query string into decoded key/value pairs, in order. False on bad percent-encoding.
bool ParseQuery(std::string_view query, std::vector<std::pair<std::string, std::string>>* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_HTTP_PARSER_H_
