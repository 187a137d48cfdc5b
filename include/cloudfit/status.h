// Status reports success or an error with a message, in the manner of LevelDB's Status.
// Errors are values that cross module edges; no exception escapes the library.
#ifndef CLOUDFIT_STATUS_H_
#define CLOUDFIT_STATUS_H_

#include <string>
#include <utility>

namespace cloudfit {

class Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,  // the user asked for something that is not allowed
    kNotFound,         // a name that resolves to nothing
    kCorruption,       // a data file that breaks its format
    kIOError,          // the file system said no
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string message) {
    return Status(Code::kInvalidArgument, std::move(message));
  }
  static Status NotFound(std::string message) {
    return Status(Code::kNotFound, std::move(message));
  }
  static Status Corruption(std::string message) {
    return Status(Code::kCorruption, std::move(message));
  }
  static Status IOError(std::string message) { return Status(Code::kIOError, std::move(message)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok", or the kind of error and its message.
  std::string ToString() const;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_STATUS_H_
