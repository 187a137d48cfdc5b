// Writing an HTTP/1.1 response to a non-blocking socket: the head, and as much of head and body
// as the socket takes now. The I/O thread and the workers both write responses (a worker sends
// what it answered itself, so that the I/O thread is never busy copying large bodies into
// sockets while a health check waits), so these are free functions of no server state.
#ifndef CLOUDFIT_SERVER_HTTP_WRITING_H_
#define CLOUDFIT_SERVER_HTTP_WRITING_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "server/http_server.h"

namespace cloudfit {

// The status line and header fields of `response`, whose body has `body_bytes` bytes (also for
// a HEAD request, which is sent no body), ending with the empty line. `close` adds
// "Connection: close"; an HTTP/1.0 client that keeps the connection is told "keep-alive".
std::string HttpResponseHead(const HttpResponse& response, size_t body_bytes, bool close,
                             int minor_version);

enum class SendProgress {
  kDone,        // everything is sent
  kWouldBlock,  // the socket is full: wait until it is writable, then send from *offset
  kBroken,      // the peer is gone or the socket failed: close it
};

// Sends `head` then `body` from byte *offset of the two together, as far as the socket takes
// without blocking (never SIGPIPE); advances *offset by what was sent.
SendProgress SendResponseBytes(int fd, std::string_view head, std::string_view body,
                               size_t* offset);

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_HTTP_WRITING_H_
