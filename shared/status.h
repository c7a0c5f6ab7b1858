// Status and Result<T>: how recoverable failures (bad input, files, sockets, shm) travel between
// modules, each carrying a message a person can act on. Value types; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "shared/check.h"

namespace smallmind::shared {

// Mirrors the gRPC codes the service uses; grpc_status.cc is the only place that maps them.
enum class StatusCode {
  kOk = 0,
  kCancelled,
  kInvalidArgument,
  kNotFound,
  kDeadlineExceeded,
  kResourceExhausted,
  kFailedPrecondition,
  kUnauthenticated,
  kUnavailable,
  kInternal,
  kUnimplemented,
};

const char* StatusCodeName(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: sampling.top_p must be in (0, 1], got 1.5"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status ResourceExhausted(std::string m) {
  return {StatusCode::kResourceExhausted, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}

// Either a T or a non-OK Status. C++20 has no std::expected.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    SM_CHECK(!std::get<Status>(v_).ok()) << "Result built from an OK status";
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & {
    SM_CHECK(ok()) << status().ToString();
    return std::get<T>(v_);
  }
  const T& value() const& {
    SM_CHECK(ok()) << status().ToString();
    return std::get<T>(v_);
  }
  T&& value() && {
    SM_CHECK(ok()) << status().ToString();
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace smallmind::shared

// Returns early from a function returning Status or Result<T> when `expr` is not OK.
#define SM_RETURN_IF_ERROR(expr)                     \
  do {                                               \
    ::smallmind::shared::Status sm_status_ = (expr); \
    if (!sm_status_.ok()) return sm_status_;         \
  } while (0)

#define SM_CONCAT_INNER(a, b) a##b
#define SM_CONCAT(a, b) SM_CONCAT_INNER(a, b)
// SM_ASSIGN_OR_RETURN(auto x, MakeX()); declares x from a Result or returns its Status.
#define SM_ASSIGN_OR_RETURN(lhs, expr) \
  SM_ASSIGN_OR_RETURN_IMPL(SM_CONCAT(sm_result_, __LINE__), lhs, expr)
#define SM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
