// One error hierarchy for the core and its backends: rank, peer, operation and the runtime's own
// code travel as fields so checkers and reports never have to parse message text.
#pragma once

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace peerconf {

// The seam operation an error came from.
enum class Op {
  kAlloc,
  kFree,
  kGetHandle,
  kOpenHandle,
  kCloseHandle,
  kCopy,
  kSetDevice,
  kAllReduce,
  kAllGather,
  kHandshake,
  kClose,
};

std::string_view opName(Op op);

inline constexpr int kNoPeer = -1;

// Base of every error the core raises. `code` is the runtime's own code (hipError_t, MPI error
// class, ...) or 0 when there is none.
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, Op op, int rank, int peer = kNoPeer, int code = 0,
        std::string codeText = {});

  Op op() const noexcept { return op_; }
  int rank() const noexcept { return rank_; }
  int peer() const noexcept { return peer_; }
  int code() const noexcept { return code_; }
  const std::string& codeText() const noexcept { return codeText_; }

 private:
  Op op_;
  int rank_;
  int peer_;
  int code_;
  std::string codeText_;
};

// A device runtime call failed (HIP, CUDA, or the mocked HIP runtime).
class BackendError : public Error {
 public:
  // `call` is the failing expression and `where` its file:line, as recorded by the check macro.
  BackendError(Op op, int rank, int peer, int code, const std::string& codeText,
               std::string call = {}, std::string where = {});
  const std::string& call() const noexcept { return call_; }
  const std::string& where() const noexcept { return where_; }

 private:
  std::string call_;
  std::string where_;
};

// A group (CPU collective) call failed.
class GroupError : public Error {
 public:
  using Error::Error;
  // This rank's own earlier failure, when the group call that failed followed it (the handshake
  // attaches it: a timeout must not hide why this rank was failing already); null when none.
  const std::exception_ptr& cause() const noexcept { return cause_; }
  void attachCause(std::exception_ptr cause) noexcept { cause_ = std::move(cause); }

 private:
  std::exception_ptr cause_;
};

// A group call did not complete before its deadline. `missing`: the ranks that had not arrived in
// the call, ascending, when the group can tell (the thread group can; an MPI collective cannot
// say who did not contribute: empty there). The message names them.
class GroupTimeout : public GroupError {
 public:
  GroupTimeout(Op op, int rank, double deadlineSeconds, std::vector<int> missing = {});
  double deadlineSeconds() const noexcept { return deadlineSeconds_; }
  const std::vector<int>& missing() const noexcept { return missing_; }

 private:
  double deadlineSeconds_;
  std::vector<int> missing_;
};

// The collective handshake failed. On the rank whose mapping failed, `thisRank()` is true and
// `cause()` holds the backend error; elsewhere the failure was on another TP rank.
class HandshakeError : public Error {
 public:
  HandshakeError(int rank, bool thisRank, std::exception_ptr cause,
                 std::vector<std::string> cleanupErrors);
  bool thisRank() const noexcept { return thisRank_; }
  std::exception_ptr cause() const noexcept { return cause_; }
  // Errors raised while releasing what this rank held before raising (normally empty).
  const std::vector<std::string>& cleanupErrors() const noexcept { return cleanupErrors_; }

 private:
  bool thisRank_;
  std::exception_ptr cause_;
  std::vector<std::string> cleanupErrors_;
};

// What one rank registered for a buffer: its size and the caller's label ("" = none).
struct RegisteredBuffer {
  int rank = 0;
  std::size_t bytes = 0;
  std::string label;
  friend bool operator==(const RegisteredBuffer&, const RegisteredBuffer&) = default;
};

// The ranks constructed different buffers (another size or another label than rank 0's), so the
// handshake would pair one rank's buffer with another's. Every rank raises it together, after
// releasing its own buffer: each `mismatches()` entry is a rank that differs from `reference()`.
// The message names them: "... rank 1 registered 'kv-cache' (4096 bytes) where rank 0 registered
// 'weights' (4096 bytes)".
class BufferMismatchError : public Error {
 public:
  BufferMismatchError(int rank, RegisteredBuffer reference,
                      std::vector<RegisteredBuffer> mismatches,
                      std::vector<std::string> cleanupErrors);
  const RegisteredBuffer& reference() const noexcept { return reference_; }
  const std::vector<RegisteredBuffer>& mismatches() const noexcept { return mismatches_; }
  // Errors raised while releasing what this rank held before raising (normally empty).
  const std::vector<std::string>& cleanupErrors() const noexcept { return cleanupErrors_; }

 private:
  RegisteredBuffer reference_;
  std::vector<RegisteredBuffer> mismatches_;
  std::vector<std::string> cleanupErrors_;
};

// close() tried every release and some failed; each failure is kept, labelled by its peer.
class CloseError : public Error {
 public:
  CloseError(int rank, std::vector<std::string> failures);
  const std::vector<std::string>& failures() const noexcept { return failures_; }

 private:
  std::vector<std::string> failures_;
};

// The message of an exception_ptr (empty when null), for reports and chained causes.
std::string describe(const std::exception_ptr& error);

}  // namespace peerconf
