#include "server/http_writing.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>

namespace cloudfit {

std::string_view HttpReason(int status) {
  // One status per line reads as the table it is.
  // clang-format off
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
  // clang-format on
}

std::string HttpResponseHead(const HttpResponse& response, size_t body_bytes, bool close,
                             int minor_version) {
  std::string head =
      fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n", response.status,
                  HttpReason(response.status), response.content_type, body_bytes);
  for (const auto& [name, value] : response.headers) head += fmt::format("{}: {}\r\n", name, value);
  if (close)
    head += "Connection: close\r\n";
  else if (minor_version == 0)
    head += "Connection: keep-alive\r\n";
  head += "\r\n";
  return head;
}

SendProgress SendResponseBytes(int fd, std::string_view head, std::string_view body,
                               size_t* offset) {
  size_t total = head.size() + body.size();
  while (*offset < total) {
    iovec parts[2];
    int count = 0;
    if (*offset < head.size()) {
      parts[count++] = {const_cast<char*>(head.data()) + *offset, head.size() - *offset};
      if (!body.empty()) parts[count++] = {const_cast<char*>(body.data()), body.size()};
    } else {
      size_t at = *offset - head.size();
      parts[count++] = {const_cast<char*>(body.data()) + at, body.size() - at};
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return SendProgress::kWouldBlock;
      return SendProgress::kBroken;
    }
    *offset += static_cast<size_t>(n);
  }
  return SendProgress::kDone;
}

}  // namespace cloudfit
