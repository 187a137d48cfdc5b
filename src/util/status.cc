#include "cloudfit/status.h"

namespace cloudfit {

std::string Status::ToString() const {
  switch (code_) {
    case Code::kOk:
      return "ok";
    case Code::kInvalidArgument:
      return "invalid argument: " + message_;
    case Code::kNotFound:
      return "not found: " + message_;
    case Code::kCorruption:
      return "bad data: " + message_;
    case Code::kIOError:
      return "I/O error: " + message_;
  }
  return message_;
}

}  // namespace cloudfit
