// The runtime table program's parts: one observation a row, the probes every runtime runs (over
// HIP's API names, runtime_table.cc, built once per runtime) and the kernel-abort probes that only
// a runtime with kernels runs (runtime_table_abort_*.cc/.cu).
#pragma once

#include <string>
#include <vector>

namespace peerconf::conformance::table {

// What one probe saw for one row of tests/conformance/runtime_table.yaml.
struct Observation {
  std::string row;     // the row's id
  std::string result;  // "opens", "refused 1", "same address", "0 bytes", ...
  std::string detail;  // printed beside it (addresses, byte counts), not compared
};

// The rows about what a kernel the host aborts leaves allocated (runtime_table_abort_cuda.cu on
// CUDA; on the mock, which runs no kernels, each row says so).
std::vector<Observation> abortRows();

// Parses "ROW id<TAB>result<TAB>detail" lines (how a forked rank reports an observation).
std::string encode(const Observation& observation);
Observation decode(const std::string& line);

}  // namespace peerconf::conformance::table
