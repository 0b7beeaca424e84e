// The runtime table program: probes, with ranks as forked processes sharing device 0 (as the
// nightly shares one GPU), each behaviour of the device runtime that the mocked HIP runtime models
// and the harness relies on, and compares what it saw with this runtime's column of
// tests/conformance/runtime_table.yaml (one row a behaviour). Built once per runtime over HIP's API
// names (PEERCONF_HIP_NS, as src/hip): the mock's run is a ctest, CUDA's a nightly stage.
//
//   peerconf_runtime_table_<runtime> --table FILE [--only ID,...] [--list]
// Prints "ROW id: result (detail)" a probe, then one line a row: "same", "DIFFERS" (the table's
// result beside the observed one), "NOT OBSERVED", or "UNMEASURED" (a row whose column waits for
// this probe: what it saw, never compared). Exit: 0 every row of this runtime's column
// observed as the table says; 1 a row differs or was not observed; 2 usage or table error; 77 no
// device.
#include "runtime_table.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hip/hip_api.h"
#include "hip/hip_variants.h"
#include "ranks.h"

namespace peerconf::conformance::table {

namespace api = peerconf::PEERCONF_HIP_NS;

std::string encode(const Observation& o) { return o.row + '\t' + o.result + '\t' + o.detail; }

Observation decode(const std::string& line) {
  Observation o;
  const auto first = line.find('\t');
  const auto second = first == std::string::npos ? first : line.find('\t', first + 1);
  o.row = line.substr(0, first);
  if (first != std::string::npos) o.result = line.substr(first + 1, second - first - 1);
  if (second != std::string::npos) o.detail = line.substr(second + 1);
  return o;
}

namespace {

constexpr std::size_t kSmall = std::size_t{64} << 10;  // sub-allocated from a chunk
constexpr std::size_t kLarge = std::size_t{4} << 20;   // a block of its own
constexpr std::size_t kHuge = std::size_t{64} << 20;
constexpr std::size_t kShared = std::size_t{256} << 20;

int code(api::hipError_t error) { return static_cast<int>(error); }

std::string refused(api::hipError_t error) { return "refused " + std::to_string(code(error)); }

void* alloc(Rank& r, std::size_t size) {
  void* ptr = nullptr;
  const api::hipError_t error = api::hipMalloc(&ptr, size);
  if (error != api::hipSuccess || ptr == nullptr) {
    throw std::runtime_error("hipMalloc(" + std::to_string(size) + ") failed with " +
                             std::to_string(code(error)) + " on rank " + std::to_string(r.rank()));
  }
  return ptr;
}

void release(void* ptr) { (void)api::hipFree(ptr); }

api::hipIpcMemHandle_t handleOf(void* ptr) {
  api::hipIpcMemHandle_t handle{};
  if (const api::hipError_t error = api::hipIpcGetMemHandle(&handle, ptr);
      error != api::hipSuccess) {
    throw std::runtime_error("hipIpcGetMemHandle failed with " + std::to_string(code(error)));
  }
  return handle;
}

void sendRaw(Rank& r, int to, const api::hipIpcMemHandle_t& handle) {
  IpcHandle bytes;
  std::memcpy(bytes.bytes.data(), &handle, IpcHandle::kSize);
  r.sendHandle(to, bytes);
}

api::hipIpcMemHandle_t recvRaw(Rank& r, int from) {
  const IpcHandle bytes = r.recvHandle(from);
  api::hipIpcMemHandle_t handle{};
  std::memcpy(&handle, bytes.bytes.data(), IpcHandle::kSize);
  return handle;
}

// A 64-bit word through the handle channel (an address, a pid).
void sendWord(Rank& r, int to, std::uint64_t word) {
  IpcHandle bytes;
  std::memcpy(bytes.bytes.data(), &word, sizeof word);
  r.sendHandle(to, bytes);
}

std::uint64_t recvWord(Rank& r, int from) {
  const IpcHandle bytes = r.recvHandle(from);
  std::uint64_t word = 0;
  std::memcpy(&word, bytes.bytes.data(), sizeof word);
  return word;
}

std::uint64_t addressOf(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr); }

std::string hexText(std::uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}

// A pattern that names its writer and purpose.
std::vector<std::uint64_t> pattern(std::uint64_t tag, std::size_t bytes) {
  std::vector<std::uint64_t> words(bytes / sizeof(std::uint64_t));
  for (std::size_t i = 0; i < words.size(); ++i)
    words[i] = (tag << 40) ^ (i * 0x9E3779B97F4A7C15ULL);
  return words;
}

void write(void* device, const std::vector<std::uint64_t>& words) {
  (void)api::hipMemcpy(device, words.data(), words.size() * sizeof(std::uint64_t),
                       api::hipMemcpyHostToDevice);
  // A copy from pageable host memory may return before its bytes reach the device; another
  // process reads them next (stale-small-reaches read "other bytes" once on an H200 without it).
  (void)api::hipDeviceSynchronize();
}

std::vector<std::uint64_t> read(const void* device, std::size_t bytes) {
  std::vector<std::uint64_t> words(bytes / sizeof(std::uint64_t));
  (void)api::hipMemcpy(words.data(), device, bytes, api::hipMemcpyDeviceToHost);
  return words;
}

// What fresh memory holds, against the bytes last written there.
std::string contents(const std::vector<std::uint64_t>& seen,
                     const std::vector<std::uint64_t>* earlier) {
  if (earlier != nullptr && seen == *earlier) return "earlier bytes";
  if (std::all_of(seen.begin(), seen.end(), [](std::uint64_t w) { return w == 0; })) {
    return "zeros";
  }
  return "other bytes";
}

void observe(Rank& r, std::string row, std::string result, std::string detail = {}) {
  r.observe(encode({std::move(row), std::move(result), std::move(detail)}));
}

void setDevice(Rank& r) {
  if (const api::hipError_t error = api::hipSetDevice(r.device()); error != api::hipSuccess) {
    throw std::runtime_error("hipSetDevice failed with " + std::to_string(code(error)));
  }
}

// Opens `handle`: the mapping, or null with the refusal in `result`.
void* open(const api::hipIpcMemHandle_t& handle, std::string& result) {
  void* mapped = nullptr;
  const api::hipError_t error =
      api::hipIpcOpenMemHandle(&mapped, handle, api::hipIpcMemLazyEnablePeerAccess);
  (void)api::hipGetLastError();
  result = error == api::hipSuccess ? "opens" : refused(error);
  return error == api::hipSuccess ? mapped : nullptr;
}

// ---- The probes --------------------------------------------------------------------------------

// Freed handles: of a small block whose chunk another block keeps alive, of a small block alone,
// of a large and a huge block; and what a stale mapping of a reused small block reaches.
void staleHandles(Rank& r) {
  setDevice(r);
  if (r.rank() == 0) {
    void* a = alloc(r, kSmall);
    void* b = alloc(r, kSmall);  // keeps a's chunk alive
    const auto ha = handleOf(a);
    release(a);
    sendRaw(r, 1, ha);
    r.wait(1);
    void* c = alloc(r, kSmall);
    observe(r, "small-block-reuse", c == a ? "same address" : "another address",
            hexText(addressOf(a)) + " then " + hexText(addressOf(c)));
    write(c, pattern(0xC, kSmall));
    r.signal(1);
    r.wait(1);
    release(b);
    release(c);
    void* d = alloc(r, kSmall);
    const auto hd = handleOf(d);
    release(d);
    sendRaw(r, 1, hd);
    r.wait(1);
    for (const std::size_t size : {kLarge, kHuge}) {
      void* big = alloc(r, size);
      const auto handle = handleOf(big);
      release(big);
      sendRaw(r, 1, handle);
      r.wait(1);
    }
    return;
  }
  std::string result;
  void* mapped = open(recvRaw(r, 0), result);
  observe(r, "stale-small-chunk-live", result);
  r.signal(0);
  r.wait(0);
  if (mapped != nullptr) {
    const bool reaches = read(mapped, kSmall) == pattern(0xC, kSmall);
    observe(r, "stale-small-reaches", reaches ? "the block now there" : "other bytes");
    (void)api::hipIpcCloseMemHandle(mapped);
  } else {
    observe(r, "stale-small-reaches", "nothing (refused)");
  }
  r.signal(0);
  const char* rows[] = {"stale-small-chunk-empty", "stale-large", "stale-huge"};
  for (const char* row : rows) {
    void* stale = open(recvRaw(r, 0), result);
    observe(r, row, result);
    if (stale != nullptr) (void)api::hipIpcCloseMemHandle(stale);
    r.signal(0);
  }
}

// An earlier registration round's handle (buffers/stale-handle-of-earlier-round.yaml): the owner
// exports a 4 MiB block, the peer maps it and closes it, the owner frees it and allocates the next
// block (the next round's buffer), takes its handle or not, and writes it; the peer then opens the
// first block's handle. Whether the new block took the freed one's address, and what the old
// handle opens onto (only the bytes both blocks span are read). The cases: the next block of the
// same size, exported (as the next round's PeerBuffer does; also whether its handle has the old
// one's bytes); 8 MiB and 2 MiB blocks, not exported; then, measured after those ran on one H200,
// an 8 MiB block exported and a 4 MiB block not exported: whether the owner exported the block at
// the place decides the stale open.
void staleLargePlace(Rank& r) {
  setDevice(r);
  constexpr std::size_t kBigger = std::size_t{8} << 20;
  constexpr std::size_t kSmaller = std::size_t{2} << 20;
  struct Case {
    const char* reuseRow;
    const char* staleRow;
    std::size_t size;
    std::uint64_t tag;
    bool exported;  // the owner takes the new block's handle before the peer's stale open
    const char* handleRow = nullptr;  // the new handle's bytes against the freed one's
  };
  const Case cases[] = {
      {"large-block-reuse", "stale-large-place-taken", kLarge, 0xB, true, "large-reuse-handle"},
      {"large-place-bigger-block", "stale-large-place-bigger", kBigger, 0x8B, false},
      {"large-place-smaller-block", "stale-large-place-smaller", kSmaller, 0x2B, false},
      {"large-place-bigger-exported-block", "stale-large-place-bigger-exported", kBigger, 0x8E,
       true},
      {"large-place-same-unexported-block", "stale-large-place-same-unexported", kLarge, 0x44,
       false}};
  for (const Case& c : cases) {
    const std::size_t common = std::min(kLarge, c.size);
    if (r.rank() == 0) {
      void* a = alloc(r, kLarge);
      const auto ha = handleOf(a);
      sendRaw(r, 1, ha);
      r.wait(1);  // mapped and closed
      release(a);
      void* b = alloc(r, c.size);
      observe(r, c.reuseRow, b == a ? "same address" : "another address",
              hexText(addressOf(a)) + " then " + hexText(addressOf(b)));
      if (c.exported) {
        const auto hb = handleOf(b);
        if (c.handleRow != nullptr) {
          observe(r, c.handleRow,
                  std::memcmp(&ha, &hb, sizeof ha) == 0 ? "the same bytes" : "other bytes");
        }
      }
      write(b, pattern(c.tag, c.size));
      r.signal(1);
      r.wait(1);
      release(b);
      continue;
    }
    const auto handle = recvRaw(r, 0);
    std::string result;
    void* first = open(handle, result);
    if (first != nullptr) (void)api::hipIpcCloseMemHandle(first);
    r.signal(0);
    r.wait(0);
    void* stale = open(handle, result);
    if (stale != nullptr) {
      std::vector<std::uint64_t> want = pattern(c.tag, c.size);
      want.resize(common / sizeof(std::uint64_t));
      result += read(stale, common) == want ? " onto the block now there" : " onto other bytes";
      (void)api::hipIpcCloseMemHandle(stale);
    }
    observe(r, c.staleRow, result);
    r.signal(0);
  }
}

void ownHandle(Rank& r) {
  setDevice(r);
  void* a = alloc(r, kSmall);
  std::string result;
  void* mapped = open(handleOf(a), result);
  observe(r, "open-own-handle", result);
  if (mapped != nullptr) (void)api::hipIpcCloseMemHandle(mapped);
  release(a);
}

// The same handle opened twice by one process, then closed until the runtime refuses.
void openTwice(Rank& r) {
  setDevice(r);
  if (r.rank() == 0) {
    void* a = alloc(r, kSmall);
    sendRaw(r, 1, handleOf(a));
    r.wait(1);
    release(a);
    return;
  }
  const auto handle = recvRaw(r, 0);
  std::string first;
  std::string second;
  void* m1 = open(handle, first);
  void* m2 = open(handle, second);
  if (m1 == nullptr || m2 == nullptr) {
    observe(r, "open-twice", first + ", then " + second);
  } else {
    observe(r, "open-twice", m1 == m2 ? "same address" : "another address",
            hexText(addressOf(m1)) + ", " + hexText(addressOf(m2)));
  }
  // Close what was opened, then once more: which closes succeed.
  std::string closes;
  std::vector<void*> toClose;
  if (m1 != nullptr) toClose.push_back(m1);
  if (m2 != nullptr) toClose.push_back(m2);
  if (m1 != nullptr) toClose.push_back(m1);
  for (std::size_t i = 0; i < toClose.size(); ++i) {
    if (i == 1 && m1 == m2 && m1 != nullptr) {
      // After one close of a twice-opened mapping: still usable?
      const std::vector<std::uint64_t> words = pattern(0x2, 64);
      const api::hipError_t error = api::hipMemcpy(
          toClose[i], words.data(), words.size() * sizeof words[0], api::hipMemcpyHostToDevice);
      (void)api::hipGetLastError();
      observe(r, "open-twice-after-one-close",
              error == api::hipSuccess ? "still mapped" : "unmapped " + refused(error));
    }
    const api::hipError_t error = api::hipIpcCloseMemHandle(toClose[i]);
    (void)api::hipGetLastError();
    closes += (closes.empty() ? "" : ", ") +
              (error == api::hipSuccess ? std::string("ok") : refused(error));
  }
  observe(r, "open-twice-closes", closes);
  r.signal(0);
}

void closeTwice(Rank& r) {
  setDevice(r);
  if (r.rank() == 0) {
    void* a = alloc(r, kSmall);
    sendRaw(r, 1, handleOf(a));
    r.wait(1);
    release(a);
    return;
  }
  std::string result;
  void* mapped = open(recvRaw(r, 0), result);
  if (mapped == nullptr) {
    observe(r, "close-twice", "not opened: " + result);
  } else {
    const api::hipError_t first = api::hipIpcCloseMemHandle(mapped);
    const api::hipError_t second = api::hipIpcCloseMemHandle(mapped);
    const api::hipError_t last = api::hipGetLastError();
    observe(r, "close-twice",
            first != api::hipSuccess    ? "first close " + refused(first)
            : second == api::hipSuccess ? "ok"
                                        : refused(second));
    observe(
        r, "last-error-after-failed-close",
        code(last) == code(second) ? "the close's error" : "code " + std::to_string(code(last)));
  }
  r.signal(0);
}

std::size_t freeBytes() {
  std::size_t free = 0;
  std::size_t total = 0;
  (void)api::hipMemGetInfo(&free, &total);
  return free;
}

// The owner frees a block a peer still maps: does the free succeed, does the peer's mapping keep
// its bytes, and when does the device's free memory come back.
void freeWhileMapped(Rank& r) {
  setDevice(r);
  if (r.rank() == 0) {
    void* a = alloc(r, kLarge);
    sendRaw(r, 1, handleOf(a));
    r.wait(1);
    const std::size_t before = freeBytes();
    const api::hipError_t error = api::hipFree(a);
    (void)api::hipGetLastError();
    const std::size_t afterFree = freeBytes();
    observe(r, "free-while-mapped", error == api::hipSuccess ? "ok" : refused(error));
    r.signal(1);
    r.wait(1);
    const std::size_t afterClose = freeBytes();
    const auto back = [&](std::size_t at) { return at >= before + kLarge; };
    observe(r, "free-while-mapped-memory",
            back(afterFree)    ? "returned at the free"
            : back(afterClose) ? "returned when the peer closes"
                               : "not returned",
            "free " + std::to_string(before) + " -> " + std::to_string(afterFree) + " -> " +
                std::to_string(afterClose));
    return;
  }
  std::string result;
  void* mapped = open(recvRaw(r, 0), result);
  if (mapped != nullptr) write(mapped, pattern(0xF, kSmall));
  r.signal(0);
  r.wait(0);
  if (mapped != nullptr) {
    observe(r, "free-while-mapped-contents",
            read(mapped, kSmall) == pattern(0xF, kSmall) ? "kept" : "changed");
    (void)api::hipIpcCloseMemHandle(mapped);
  } else {
    observe(r, "free-while-mapped-contents", "not opened: " + result);
  }
  r.signal(0);
}

// What a new block holds: in a process's first allocation, after a block of the same size was
// written and freed (alone: its chunk went with it), and in the place of a written block freed
// while another block kept its chunk alive.
void freshContents(Rank& r) {
  setDevice(r);
  {
    void* keep = alloc(r, kSmall);
    void* a = alloc(r, kSmall);
    const std::vector<std::uint64_t> earlier = pattern(0xD, kSmall);
    write(a, earlier);
    release(a);
    void* b = alloc(r, kSmall);
    observe(r, "fresh-small-in-live-chunk", contents(read(b, kSmall), &earlier),
            b == a ? "same address" : "another address");
    release(b);
    release(keep);
  }
  for (const std::size_t size : {kSmall, kLarge}) {
    const std::string kind = size == kSmall ? "small" : "large";
    void* a = alloc(r, size);
    observe(r, "fresh-first-" + kind, contents(read(a, size), nullptr));
    const std::vector<std::uint64_t> earlier = pattern(0xE, size);
    write(a, earlier);
    release(a);
    void* b = alloc(r, size);
    observe(r, "fresh-" + kind + "-recycled", contents(read(b, size), &earlier),
            b == a ? "same address" : "another address");
    release(b);
  }
}

// Two small blocks of one chunk: are their handles distinct, and do a peer's mappings of them sit
// as far apart as the blocks do in the owner.
void subBlocks(Rank& r) {
  setDevice(r);
  if (r.rank() == 0) {
    void* a = alloc(r, kSmall);
    void* b = alloc(r, kSmall);
    const auto ha = handleOf(a);
    const auto hb = handleOf(b);
    observe(r, "sub-block-handles", std::memcmp(&ha, &hb, sizeof ha) == 0 ? "equal" : "distinct");
    sendRaw(r, 1, ha);
    sendRaw(r, 1, hb);
    sendWord(r, 1, addressOf(b) - addressOf(a));
    r.wait(1);
    release(a);
    release(b);
    return;
  }
  std::string first;
  std::string second;
  const auto ha = recvRaw(r, 0);
  const auto hb = recvRaw(r, 0);
  const std::uint64_t apart = recvWord(r, 0);
  void* ma = open(ha, first);
  void* mb = open(hb, second);
  if (ma != nullptr && mb != nullptr) {
    observe(r, "sub-block-offsets",
            addressOf(mb) - addressOf(ma) == apart ? "as in the owner" : "elsewhere",
            hexText(addressOf(mb) - addressOf(ma)) + " vs " + hexText(apart));
  } else {
    observe(r, "sub-block-offsets", "not opened: " + first + ", " + second);
  }
  if (ma != nullptr) (void)api::hipIpcCloseMemHandle(ma);
  if (mb != nullptr) (void)api::hipIpcCloseMemHandle(mb);
  r.signal(0);
}

// Free memory as a process sees it while another process on the same device allocates.
void sharedMemInfo(Rank& r) {
  setDevice(r);
  if (r.rank() == 0) {
    r.wait(1);
    void* a = alloc(r, kShared);
    r.signal(1);
    r.wait(1);
    release(a);
    return;
  }
  const std::size_t before = freeBytes();
  r.signal(0);
  r.wait(0);
  const std::size_t after = freeBytes();
  observe(
      r, "meminfo-shared",
      before >= after + kShared ? "counts the other process's allocation" : "counts its own only",
      std::to_string(before) + " -> " + std::to_string(after));
  r.signal(0);
}

// The last-error state: after a refused open, read twice; after a refusal followed by a success.
void lastError(Rank& r) {
  setDevice(r);
  api::hipIpcMemHandle_t garbage{};
  std::memset(&garbage, 0x5a, sizeof garbage);
  void* mapped = nullptr;
  const api::hipError_t error =
      api::hipIpcOpenMemHandle(&mapped, garbage, api::hipIpcMemLazyEnablePeerAccess);
  const api::hipError_t peeked = api::hipPeekAtLastError();
  const api::hipError_t got = api::hipGetLastError();
  const api::hipError_t again = api::hipGetLastError();
  observe(r, "open-garbage", error == api::hipSuccess ? "opens" : refused(error));
  observe(r, "last-error-after-failure",
          code(peeked) == code(error) && code(got) == code(error) && code(again) == 0
              ? "kept until read, then cleared"
              : "peek " + std::to_string(code(peeked)) + ", get " + std::to_string(code(got)) +
                    ", get " + std::to_string(code(again)));
  (void)api::hipIpcOpenMemHandle(&mapped, garbage, api::hipIpcMemLazyEnablePeerAccess);
  void* a = alloc(r, kSmall);
  const api::hipError_t after = api::hipGetLastError();
  observe(r, "last-error-after-success",
          code(after) == code(error) ? "kept"
          : code(after) == 0         ? "cleared"
                                     : "code " + std::to_string(code(after)));
  release(a);
}

struct Probe {
  const char* name;
  int ranks;
  RankBody body;
};

std::vector<Probe> probes() {
  return {
      {"stale handles", 2, staleHandles},   {"stale large, the place after it", 2, staleLargePlace},
      {"own handle", 1, ownHandle},         {"open twice", 2, openTwice},
      {"close twice", 2, closeTwice},       {"free while mapped", 2, freeWhileMapped},
      {"fresh contents", 1, freshContents}, {"sub-blocks", 2, subBlocks},
      {"shared meminfo", 2, sharedMemInfo}, {"last error", 1, lastError}};
}

Implementation implementation() {
  Implementation impl;
  impl.name = std::string(api::kRuntimeName);
  impl.placement = Placement::kProcesses;
  impl.sharedDevice = true;
  impl.beforeRanks = [] { api::beforeForkedRanks(); };
  impl.deviceCount = [] {
    int count = 0;
    const api::hipError_t error = api::hipGetDeviceCount(&count);
    if (error != api::hipSuccess)
      return hip::DeviceCount{0, code(error), api::hipGetErrorString(error)};
    return hip::DeviceCount{count, 0, {}};
  };
  return impl;
}

// The table's expected result of each row for `runtime` ("mock", "cuda", "rocm"); rows whose
// result is "unmeasured" are left out (and listed in `unmeasured`). Throws YAML or invalid_argument
// errors on a bad table.
std::map<std::string, std::string> expected(const std::string& path, const std::string& runtime,
                                            std::set<std::string>& unmeasured) {
  const YAML::Node table = YAML::LoadFile(path);
  std::map<std::string, std::string> out;
  std::set<std::string> ids;
  for (const YAML::Node& row : table["rows"]) {
    const auto id = row["id"].as<std::string>();
    if (!ids.insert(id).second) throw std::invalid_argument("row " + id + " appears twice");
    const YAML::Node column = row[runtime];
    if (!column || !column["result"]) {
      throw std::invalid_argument("row " + id + " has no " + runtime + " result");
    }
    const auto result = column["result"].as<std::string>();
    if (result != "unmeasured") {
      out.emplace(id, result);
    } else {
      unmeasured.insert(id);
    }
  }
  return out;
}

// A table result matches an observed one when equal, or when it is the observed result's first
// words ("refused" matches "refused 800").
bool matches(const std::string& want, const std::string& seen) {
  return seen == want || (seen.size() > want.size() && seen.compare(0, want.size(), want) == 0 &&
                          seen[want.size()] == ' ');
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"Probes the device runtime's behaviours and compares them with the runtime table"};
  std::string tablePath;
  std::string column = std::string(api::kRuntimeName) == "mock-hip" ? "mock" : api::kRuntimeName;
  std::vector<std::string> only;
  app.add_option("--table", tablePath, "the table (tests/conformance/runtime_table.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--only", only, "probe only these rows (ids, comma-separated)")->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  std::map<std::string, std::string> want;
  std::set<std::string> unmeasured;
  try {
    want = expected(tablePath, column, unmeasured);
  } catch (const std::exception& e) {
    std::cerr << tablePath << ": " << e.what() << "\n";
    return 2;
  }
  const Implementation impl = implementation();
  if (const hip::DeviceCount devices = probeDevices(impl); devices.count == 0) {
    std::cout << "no device: hipGetDeviceCount returned " << devices.code << " (" << devices.text
              << "): nothing probed\n";
    return 77;
  }
  std::cout << "runtime " << api::kRuntimeName << ", column " << column
            << ", ranks as processes sharing device 0\n";
  std::vector<Observation> seen;
  bool broken = false;
  for (const Probe& probe : probes()) {
    for (const RankReport& report : runRanks(impl, probe.ranks, probe.body)) {
      for (const std::string& failure : report.failures) {
        std::cout << "PROBE FAILED (" << probe.name << "): " << failure << "\n";
        broken = true;
      }
      for (const std::string& line : report.observations) seen.push_back(decode(line));
    }
  }
  seen.push_back({"ledger", api::kKeepsLedger ? "kept" : "none", {}});
  for (Observation& o : abortRows()) {
    if (o.result == "probe failed") {
      std::cout << "PROBE FAILED (kernel abort): " << o.detail << "\n";
      broken = true;
      continue;
    }
    seen.push_back(std::move(o));
  }
  std::map<std::string, Observation> byRow;
  for (const Observation& o : seen) {
    std::cout << "ROW " << o.row << ": " << o.result
              << (o.detail.empty() ? "" : " (" + o.detail + ")") << "\n";
    byRow.emplace(o.row, o);
  }
  int differ = 0;
  for (const auto& [row, result] : want) {
    if (!only.empty() && std::find(only.begin(), only.end(), row) == only.end()) continue;
    const auto it = byRow.find(row);
    if (it == byRow.end()) {
      std::cout << "NOT OBSERVED " << row << ": the table says " << result << "\n";
      ++differ;
    } else if (!matches(result, it->second.result)) {
      std::cout << "DIFFERS " << row << ": the table says " << result << ", " << api::kRuntimeName
                << " did " << it->second.result << "\n";
      ++differ;
    } else {
      std::cout << "same " << row << ": " << it->second.result << "\n";
    }
  }
  for (const auto& [row, o] : byRow) {
    if (unmeasured.count(row) != 0) {
      // Not compared: what to write into the column once measured.
      std::cout << "UNMEASURED " << row << ": " << api::kRuntimeName << " did " << o.result
                << " (the table's " << column << " column says unmeasured)\n";
    } else if (want.count(row) == 0) {
      std::cout << "NOT IN TABLE " << row << ": " << o.result << "\n";
    }
  }
  std::cout << differ << " row(s) differ from the table's " << column << " column"
            << (broken ? "; a probe failed" : "") << "\n";
  return differ == 0 && !broken ? 0 : 1;
}

}  // namespace peerconf::conformance::table

int main(int argc, char** argv) { return peerconf::conformance::table::run(argc, argv); }
