// lens::Status and lens::StatusOr<T>: the error model of the whole public API.
//
// A Status is OK or carries a canonical code (the gRPC set) and a message that
// says what was wrong and where. No exception crosses a Lens API; functions
// that can fail return a Status or a StatusOr<T>. Both are cheap to move,
// [[nodiscard]], and safe to use from any thread (they are values; no sharing).
#ifndef LENS_STATUS_H_
#define LENS_STATUS_H_

#include <cassert>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "lens/export.h"

namespace lens {

// Canonical error codes (numerically equal to gRPC's).
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

// "INVALID_ARGUMENT" etc.
LENS_EXPORT std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] LENS_EXPORT Status {
 public:
  // OK.
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code),
        message_(code == StatusCode::kOk ? "" : std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "OK" or "NOT_FOUND: <message>".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgumentError(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFoundError(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status InternalError(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}
inline Status UnavailableError(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
inline Status FailedPreconditionError(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status PermissionDeniedError(std::string m) {
  return Status(StatusCode::kPermissionDenied, std::move(m));
}
inline Status ResourceExhaustedError(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status OutOfRangeError(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
inline Status UnimplementedError(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status CancelledError(std::string m) {
  return Status(StatusCode::kCancelled, std::move(m));
}
inline Status DeadlineExceededError(std::string m) {
  return Status(StatusCode::kDeadlineExceeded, std::move(m));
}
inline Status AlreadyExistsError(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
inline Status AbortedError(std::string m) {
  return Status(StatusCode::kAborted, std::move(m));
}

// Builds a Status from errno after a failed system call: "<what>: <strerror>",
// with a code derived from the errno value (ENOENT -> NOT_FOUND, EACCES ->
// PERMISSION_DENIED, ...).
LENS_EXPORT Status ErrnoError(int errno_value, std::string_view what);

LENS_EXPORT std::ostream& operator<<(std::ostream& os, const Status& s);

// A value or an error. Accessing the value of an error StatusOr is a
// programming error (asserts in debug builds).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status)
      : status_(status) {  // NOLINT: implicit by design
    assert(!status_.ok() && "StatusOr built from OK status without a value");
    if (status_.ok())
      status_ = InternalError("StatusOr built from OK status without a value");
  }
  StatusOr(Status&& status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "StatusOr built from OK status without a value");
    if (status_.ok())
      status_ = InternalError("StatusOr built from OK status without a value");
  }
  StatusOr(const T& value) : value_(value) {}        // NOLINT
  StatusOr(T&& value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const& { return status_; }
  Status status() && { return std::move(status_); }

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
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  Status status_;  // OK when value_ holds a value.
  std::optional<T> value_;
};

}  // namespace lens

#define LENS_STATUS_CONCAT_INNER_(a, b) a##b
#define LENS_STATUS_CONCAT_(a, b) LENS_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define LENS_RETURN_IF_ERROR(expr)                       \
  do {                                                   \
    ::lens::Status lens_status_tmp_ = (expr);            \
    if (!lens_status_tmp_.ok()) return lens_status_tmp_; \
  } while (0)

// `LENS_ASSIGN_OR_RETURN(auto x, Foo());` declares/assigns x from a StatusOr or
// returns its error from the enclosing function.
#define LENS_ASSIGN_OR_RETURN(lhs, expr)                                     \
  LENS_ASSIGN_OR_RETURN_IMPL_(LENS_STATUS_CONCAT_(lens_statusor_, __LINE__), \
                              lhs, expr)
#define LENS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return std::move(tmp).status();    \
  lhs = std::move(tmp).value()

#endif  // LENS_STATUS_H_
