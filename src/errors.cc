// Error hierarchy implementation: messages are built once here from the fields.
#include "errors.h"

#include <sstream>
#include <utility>

namespace peerconf {

std::string_view opName(Op op) {
  switch (op) {
    case Op::kAlloc:
      return "alloc";
    case Op::kFree:
      return "free";
    case Op::kGetHandle:
      return "get-handle";
    case Op::kOpenHandle:
      return "open";
    case Op::kCloseHandle:
      return "close-handle";
    case Op::kCopy:
      return "copy";
    case Op::kSetDevice:
      return "set-device";
    case Op::kAllReduce:
      return "all-reduce";
    case Op::kAllGather:
      return "all-gather";
    case Op::kHandshake:
      return "handshake";
    case Op::kClose:
      return "close";
  }
  return "unknown";
}

Error::Error(const std::string& message, Op op, int rank, int peer, int code, std::string codeText)
    : std::runtime_error(message),
      op_(op),
      rank_(rank),
      peer_(peer),
      code_(code),
      codeText_(std::move(codeText)) {}

namespace {
std::string backendMessage(Op op, int rank, int peer, int code, const std::string& codeText,
                           const std::string& call, const std::string& where) {
  std::ostringstream out;
  out << opName(op) << " failed on rank " << rank;
  if (peer != kNoPeer) out << " (peer " << peer << ")";
  out << ": " << codeText << " (" << code << ")";
  if (!call.empty()) out << " in " << call;
  if (!where.empty()) out << " at " << where;
  return out.str();
}
}  // namespace

BackendError::BackendError(Op op, int rank, int peer, int code, const std::string& codeText,
                           std::string call, std::string where)
    : Error(backendMessage(op, rank, peer, code, codeText, call, where), op, rank, peer, code,
            codeText),
      call_(std::move(call)),
      where_(std::move(where)) {}

namespace {

// " (rank 3 did not arrive)", " (ranks 1, 3 did not arrive)"; empty when unknown.
std::string missingText(const std::vector<int>& missing) {
  if (missing.empty()) return {};
  std::string text = missing.size() == 1 ? " (rank " : " (ranks ";
  for (std::size_t i = 0; i < missing.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(missing[i]);
  }
  return text + " did not arrive)";
}

}  // namespace

GroupTimeout::GroupTimeout(Op op, int rank, double deadlineSeconds, std::vector<int> missing)
    : GroupError(std::string(opName(op)) + " on rank " + std::to_string(rank) +
                     " did not complete within its deadline of " + std::to_string(deadlineSeconds) +
                     " s" + missingText(missing),
                 op, rank),
      deadlineSeconds_(deadlineSeconds),
      missing_(std::move(missing)) {}

HandshakeError::HandshakeError(int rank, bool thisRank, std::exception_ptr cause,
                               std::vector<std::string> cleanupErrors)
    : Error(std::string("peer memory handshake failed on ") + (thisRank ? "this" : "another") +
                " TP rank",
            Op::kHandshake, rank),
      thisRank_(thisRank),
      cause_(std::move(cause)),
      cleanupErrors_(std::move(cleanupErrors)) {}

namespace {
std::string describeRegistered(const RegisteredBuffer& b) {
  return "rank " + std::to_string(b.rank) + " registered " +
         (b.label.empty() ? std::string("an unlabelled buffer") : "'" + b.label + "'") + " (" +
         std::to_string(b.bytes) + " bytes)";
}

std::string mismatchMessage(const RegisteredBuffer& reference,
                            const std::vector<RegisteredBuffer>& mismatches) {
  std::string out = "peer memory handshake failed: the TP ranks registered different buffers:";
  const char* sep = " ";
  for (const auto& m : mismatches) {
    out += sep + describeRegistered(m) + " where " + describeRegistered(reference);
    sep = "; ";
  }
  return out;
}
}  // namespace

BufferMismatchError::BufferMismatchError(int rank, RegisteredBuffer reference,
                                         std::vector<RegisteredBuffer> mismatches,
                                         std::vector<std::string> cleanupErrors)
    : Error(mismatchMessage(reference, mismatches), Op::kHandshake, rank),
      reference_(std::move(reference)),
      mismatches_(std::move(mismatches)),
      cleanupErrors_(std::move(cleanupErrors)) {}

namespace {
std::string joinFailures(int rank, const std::vector<std::string>& failures) {
  std::string out = "close on rank " + std::to_string(rank) + " failed " +
                    std::to_string(failures.size()) + " release(s):";
  for (const auto& f : failures) out += " [" + f + "]";
  return out;
}
}  // namespace

CloseError::CloseError(int rank, std::vector<std::string> failures)
    : Error(joinFailures(rank, failures), Op::kClose, rank), failures_(std::move(failures)) {}

std::string describe(const std::exception_ptr& error) {
  if (!error) return {};
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace peerconf
