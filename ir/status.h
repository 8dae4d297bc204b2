// Errors as values: Status and StatusOr<T>.
//
// Every fallible API in PLIR returns one of these; exceptions never cross an
// API or plugin boundary. A Status is either OK or carries a code and a
// human-readable message (for parse errors: "file:line:col: ...").
#ifndef PLIR_IR_STATUS_H_
#define PLIR_IR_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace plir {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     // bad input: parse errors, ill-typed calls
  kNotFound,            // unknown name
  kAlreadyExists,       // duplicate registration
  kFailedPrecondition,  // verifier failures, broken contracts
  kUnimplemented,
  kInternal,
  kResourceExhausted,  // limits (nesting depth, sizes)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is `prefix + ": " + message()`.
  Status WithPrefix(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status AlreadyExists(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }
inline Status Unimplemented(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}

// Holds either a value of type T or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT: implicit
    assert(!status.ok() && "StatusOr constructed from an OK status");
    if (status_.ok()) status_ = Internal("StatusOr from OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // Precondition: ok().
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T& value() & {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace plir

// Evaluates `expr` (a Status); returns it from the enclosing function if not OK.
#define PLIR_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::plir::Status plir_status_ = (expr);        \
    if (!plir_status_.ok()) return plir_status_; \
  } while (0)

#define PLIR_CONCAT_INNER_(a, b) a##b
#define PLIR_CONCAT_(a, b) PLIR_CONCAT_INNER_(a, b)

// `PLIR_ASSIGN_OR_RETURN(auto x, MakeX());` binds the value or returns the error.
#define PLIR_ASSIGN_OR_RETURN(lhs, expr) \
  PLIR_ASSIGN_OR_RETURN_IMPL_(PLIR_CONCAT_(plir_statusor_, __LINE__), lhs, expr)
#define PLIR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()

#endif  // PLIR_IR_STATUS_H_
