#include "server/http_parser.h"

#include <algorithm>

#include <fmt/format.h>

namespace cloudfit {

namespace {

// A chunk-size line ("1a2b;name=value") longer than this is not a real client's.
constexpr size_t kMaxChunkLineBytes = 1024;
// Hex digits of a chunk size: 15 cannot overflow size_t, and no body is that large anyway.
constexpr size_t kMaxChunkSizeDigits = 15;

bool IsTokenChar(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return IsTokenChar(static_cast<unsigned char>(c)); });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The comma-separated elements of a header value, trimmed and lower-cased, empty ones dropped.
std::vector<std::string> ListElements(std::string_view value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    std::string_view element = TrimOws(value.substr(start, comma - start));
    if (!element.empty()) out.push_back(Lower(element));
    start = comma + 1;
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A line without its '\n' and an optional '\r' before it.
std::string_view StripLineEnd(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

const std::string* HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

bool PercentDecode(std::string_view text, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      int high = i + 1 < text.size() ? HexValue(text[i + 1]) : -1;
      int low = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (high < 0 || low < 0) return false;
      out->push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool ParseQuery(std::string_view query, std::vector<std::pair<std::string, std::string>>* out) {
  out->clear();
  size_t start = 0;
  while (start <= query.size()) {
    size_t amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    std::string_view pair = query.substr(start, amp - start);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      std::string key, value;
      if (!PercentDecode(pair.substr(0, eq), true, &key)) return false;
      if (eq != std::string_view::npos && !PercentDecode(pair.substr(eq + 1), true, &value)) {
        return false;
      }
      out->emplace_back(std::move(key), std::move(value));
    }
    start = amp + 1;
  }
  return true;
}

HttpRequestParser::HttpRequestParser(HttpLimits limits) : limits_(limits) {}

void HttpRequestParser::Reset() {
  state_ = State::kHeaders;
  request_ = HttpRequest();
  header_bytes_.clear();
  bytes_received_ = 0;
  chunked_ = false;
  content_length_ = 0;
  chunk_state_ = ChunkState::kSize;
  chunk_line_.clear();
  chunk_left_ = 0;
  trailer_bytes_ = 0;
  line_start_ = 0;
  method_scan_ = 0;
  method_done_ = false;
  error_status_ = 0;
  error_message_.clear();
}

void HttpRequestParser::Fail(int status, std::string message) {
  state_ = State::kError;
  error_status_ = status;
  error_message_ = std::move(message);
}

void HttpRequestParser::Finish() { state_ = State::kComplete; }

size_t HttpRequestParser::Feed(std::string_view data) {
  size_t consumed = 0;
  while (consumed < data.size() && (state_ == State::kHeaders || state_ == State::kBody)) {
    size_t n = state_ == State::kHeaders ? FeedHeaders(data.substr(consumed))
                                         : FeedBody(data.substr(consumed));
    consumed += n;
    bytes_received_ += n;
    if (n == 0) break;
  }
  // A request without a body is complete as soon as its headers are.
  if (state_ == State::kBody && !chunked_ && content_length_ == 0) Finish();
  return consumed;
}

size_t HttpRequestParser::FeedHeaders(std::string_view data) {
  size_t consumed = 0;
  while (consumed < data.size()) {
    size_t newline = data.find('\n', consumed);
    size_t end = newline == std::string_view::npos ? data.size() : newline + 1;
    header_bytes_.append(data.substr(consumed, end - consumed));
    consumed = end;
    // A method is a token: bytes that cannot be one (a TLS handshake, binary noise) are
    // refused as they arrive rather than after the header deadline.
    if (line_start_ == 0 && !method_done_) {
      for (; method_scan_ < header_bytes_.size(); ++method_scan_) {
        unsigned char c = static_cast<unsigned char>(header_bytes_[method_scan_]);
        if (c == ' ' && method_scan_ > 0) {
          method_done_ = true;
          break;
        }
        if (!IsTokenChar(c) && c != '\r' && c != '\n') {
          Fail(400, "request line: the method is not a token");
          return consumed;
        }
      }
    }
    // The first line is the request line: its own limit says 414, the section's 431.
    if (line_start_ == 0 &&
        StripLineEnd(header_bytes_).size() > limits_.max_request_line_bytes) {
      Fail(414, fmt::format("request line: longer than {} bytes", limits_.max_request_line_bytes));
      return consumed;
    }
    if (header_bytes_.size() > limits_.max_header_bytes) {
      Fail(431, fmt::format("headers: more than {} bytes", limits_.max_header_bytes));
      return consumed;
    }
    if (newline == std::string_view::npos) break;
    std::string_view line = StripLineEnd(std::string_view(header_bytes_).substr(line_start_));
    if (line.empty()) {
      if (line_start_ == 0) {
        // Empty lines before the request line are allowed and skipped (RFC 9112 section 2.2).
        header_bytes_.clear();
        method_scan_ = 0;
        continue;
      }
      if (ParseHeaderSection()) state_ = State::kBody;
      return consumed;
    }
    line_start_ = header_bytes_.size();
  }
  return consumed;
}

bool HttpRequestParser::ParseRequestLine(std::string_view line) {
  size_t first = line.find(' ');
  size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    Fail(400, "request line: expected 'METHOD TARGET HTTP/1.1'");
    return false;
  }
  std::string_view method = line.substr(0, first);
  std::string_view target = line.substr(first + 1, second - first - 1);
  std::string_view version = line.substr(second + 1);
  if (!IsToken(method)) {
    Fail(400, "request line: the method is not a token");
    return false;
  }
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || version[6] != '.' ||
      version[5] < '0' || version[5] > '9' || version[7] < '0' || version[7] > '9') {
    Fail(400, "request line: the version is not HTTP/1.1 or HTTP/1.0");
    return false;
  }
  if (version[5] != '1') {
    Fail(505, fmt::format("request line: HTTP/{}.{} is not supported; use HTTP/1.1", version[5],
                          version[7]));
    return false;
  }
  request_.minor_version = version[7] - '0';
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        unsigned char u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7F;
      })) {
    Fail(400, "request target: empty or holds control characters");
    return false;
  }
  // Absolute form (through a proxy): keep the path and query only.
  std::string_view origin = target;
  if (origin.substr(0, 7) == "http://" || origin.substr(0, 8) == "https://") {
    size_t slash = origin.find('/', origin.find("//") + 2);
    origin = slash == std::string_view::npos ? std::string_view("/") : origin.substr(slash);
  }
  if (origin != "*" && origin.front() != '/') {
    Fail(400, "request target: expected a path starting with '/'");
    return false;
  }
  request_.method = std::string(method);
  request_.target = std::string(target);
  size_t question = origin.find('?');
  std::string_view path = origin.substr(0, question);
  if (size_t hash = path.find('#'); hash != std::string_view::npos) path = path.substr(0, hash);
  if (question != std::string_view::npos) request_.query = std::string(origin.substr(question + 1));
  if (!PercentDecode(path, false, &request_.path)) {
    Fail(400, "request target: bad percent-encoding in the path");
    return false;
  }
  return true;
}

bool HttpRequestParser::ParseHeaderSection() {
  std::string_view all(header_bytes_);
  size_t end = all.find('\n');
  if (!ParseRequestLine(StripLineEnd(all.substr(0, end + 1)))) return false;
  size_t pos = end + 1;
  bool saw_host = false, saw_length = false;
  std::string length_value;
  std::vector<std::string> codings;
  while (pos < all.size()) {
    size_t next = all.find('\n', pos);
    std::string_view line = StripLineEnd(all.substr(pos, next - pos + 1));
    pos = next + 1;
    if (line.empty()) break;
    if (line.front() == ' ' || line.front() == '\t') {
      Fail(400, "headers: obsolete line folding is not accepted");
      return false;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      Fail(400, "headers: a field is not 'name: value'");
      return false;
    }
    std::string_view value = TrimOws(line.substr(colon + 1));
    if (std::any_of(value.begin(), value.end(), [](char c) {
          unsigned char u = static_cast<unsigned char>(c);
          return (u < 0x20 && u != '\t') || u == 0x7F;
        })) {
      Fail(400, "headers: a value holds control characters");
      return false;
    }
    if (request_.headers.size() == limits_.max_headers) {
      Fail(431, fmt::format("headers: more than {} fields", limits_.max_headers));
      return false;
    }
    std::string name = Lower(line.substr(0, colon));
    if (name == "host") {
      if (saw_host) {
        Fail(400, "headers: more than one Host");
        return false;
      }
      saw_host = true;
    } else if (name == "content-length") {
      // Repeated or listed values must agree ("5, 5"); anything else is ambiguous framing.
      for (const std::string& element : ListElements(value)) {
        if (saw_length && element != length_value) {
          Fail(400, "headers: conflicting Content-Length values");
          return false;
        }
        saw_length = true;
        length_value = element;
      }
      if (!saw_length) {
        Fail(400, "headers: empty Content-Length");
        return false;
      }
    } else if (name == "transfer-encoding") {
      for (std::string& c : ListElements(value)) codings.push_back(std::move(c));
    } else if (name == "connection") {
      for (const std::string& option : ListElements(value)) {
        if (option == "close") request_.keep_alive = false;
      }
    } else if (name == "expect") {
      if (Lower(value) != "100-continue") {
        Fail(417, "headers: the only expectation understood is 100-continue");
        return false;
      }
      request_.expect_continue = true;
    }
    request_.headers.emplace_back(std::move(name), std::string(value));
  }
  if (request_.minor_version == 0) {
    // HTTP/1.0 keeps a connection only when asked to.
    bool keep = false;
    if (const std::string* c = request_.Header("connection")) {
      for (const std::string& option : ListElements(*c)) keep |= option == "keep-alive";
    }
    request_.keep_alive = request_.keep_alive && keep;
  } else if (!saw_host) {
    Fail(400, "headers: Host is required in HTTP/1.1");
    return false;
  }
  if (!codings.empty()) {
    if (request_.minor_version == 0) {
      Fail(400, "headers: Transfer-Encoding is not defined in HTTP/1.0");
      return false;
    }
    if (saw_length) {
      Fail(400, "headers: Content-Length and Transfer-Encoding together");
      return false;
    }
    if (codings.size() != 1 || codings[0] != "chunked") {
      Fail(501, "headers: the only transfer coding supported is chunked");
      return false;
    }
    chunked_ = true;
    return true;
  }
  if (saw_length) {
    if (length_value.empty() || length_value.size() > 19 ||
        !std::all_of(length_value.begin(), length_value.end(),
                     [](char c) { return c >= '0' && c <= '9'; })) {
      Fail(400, "headers: Content-Length is not a number of bytes");
      return false;
    }
    content_length_ = std::stoull(length_value);
    if (content_length_ > limits_.max_body_bytes) {
      Fail(413, fmt::format("body: {} bytes; larger than the limit of {} bytes", content_length_,
                            limits_.max_body_bytes));
      return false;
    }
    request_.body.reserve(content_length_);
  }
  return true;
}

size_t HttpRequestParser::FeedBody(std::string_view data) {
  if (chunked_) return FeedChunked(data);
  size_t take = std::min(data.size(), content_length_ - request_.body.size());
  request_.body.append(data.substr(0, take));
  if (request_.body.size() == content_length_) Finish();
  return take;
}

size_t HttpRequestParser::FeedChunked(std::string_view data) {
  size_t consumed = 0;
  while (consumed < data.size() && state_ == State::kBody) {
    if (chunk_state_ == ChunkState::kData) {
      size_t take = std::min(chunk_left_, data.size() - consumed);
      request_.body.append(data.substr(consumed, take));
      consumed += take;
      chunk_left_ -= take;
      if (chunk_left_ == 0) chunk_state_ = ChunkState::kDataEnd;
      continue;
    }
    // The other states read a line at a time.
    size_t newline = data.find('\n', consumed);
    size_t end = newline == std::string_view::npos ? data.size() : newline + 1;
    chunk_line_.append(data.substr(consumed, end - consumed));
    consumed = end;
    if (chunk_state_ == ChunkState::kTrailer) {
      if (trailer_bytes_ + chunk_line_.size() > limits_.max_header_bytes) {
        Fail(431, fmt::format("trailers: more than {} bytes", limits_.max_header_bytes));
        return consumed;
      }
    } else if (chunk_line_.size() > kMaxChunkLineBytes) {
      Fail(400, fmt::format("body: a chunk size line longer than {} bytes", kMaxChunkLineBytes));
      return consumed;
    }
    if (newline == std::string_view::npos) break;
    std::string_view line = StripLineEnd(chunk_line_);
    switch (chunk_state_) {
      case ChunkState::kSize: {
        size_t digits = 0;
        size_t size = 0;
        while (digits < line.size() && HexValue(line[digits]) >= 0) {
          if (digits == kMaxChunkSizeDigits) {
            Fail(413, fmt::format("body: a chunk larger than the limit of {} bytes",
                                  limits_.max_body_bytes));
            return consumed;
          }
          size = size * 16 + static_cast<size_t>(HexValue(line[digits]));
          ++digits;
        }
        std::string_view rest = TrimOws(line.substr(digits));
        if (digits == 0 || (!rest.empty() && rest.front() != ';')) {
          Fail(400, "body: a chunk size is not hexadecimal");
          return consumed;
        }
        if (size > limits_.max_body_bytes - request_.body.size()) {
          Fail(413, fmt::format("body: larger than the limit of {} bytes", limits_.max_body_bytes));
          return consumed;
        }
        chunk_left_ = size;
        chunk_state_ = size == 0 ? ChunkState::kTrailer : ChunkState::kData;
        break;
      }
      case ChunkState::kDataEnd:
        if (!line.empty()) {
          Fail(400, "body: a chunk is longer than its size says");
          return consumed;
        }
        chunk_state_ = ChunkState::kSize;
        break;
      case ChunkState::kTrailer:
        trailer_bytes_ += chunk_line_.size();
        if (line.empty()) Finish();  // trailer fields are read and ignored
        break;
      case ChunkState::kData:
        break;
    }
    chunk_line_.clear();
  }
  return consumed;
}

}  // namespace cloudfit
