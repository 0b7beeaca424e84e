// The in-process arena of simulated time (arena.cc) through the runtime it backs: the same answers
// as the memfd segments for one script of calls, no memfd a run, the same pointers for the same
// seed, nothing reused within a run, and zeros for the next run's fresh memory.
#include "mock_hip/arena.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "mock_hip/control.h"
#include "mock_hip/hip_runtime_api.h"
#include "mock_hip/segment.h"
#include "mock_hip_test_support.h"

namespace peerconf::mock_hip::detail {
namespace {

using test_support::generationOf;
using test_support::ownSegments;
using MockHipArena = test_support::MockHipTest;

// What one script of calls saw, without the pointers themselves (they differ between the two
// kinds of memory): the calls' codes, the words read, which pointers were the same, the
// allocation numbers, and the memfds held while it ran.
struct Transcript {
  std::vector<int> codes;
  std::vector<std::uint64_t> words;
  std::vector<bool> same;
  std::vector<std::uint64_t> generations;
  std::vector<std::uint64_t> pointers;  // compared only between runs of one kind of memory
  std::size_t memfdsHeld = 0;
  bool operator==(const Transcript& other) const {
    return codes == other.codes && words == other.words && same == other.same &&
           generations == other.generations;
  }
};

std::uint64_t word(const void* p) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// `size` bytes on `device`, exported to `handle`.
void* allocOn(int device, std::size_t size, hipIpcMemHandle_t* handle) {
  EXPECT_EQ(hipSetDevice(device), hipSuccess);
  void* ptr = nullptr;
  EXPECT_EQ(hipExtMallocWithFlags(&ptr, size, hipDeviceMallocUncached), hipSuccess);
  EXPECT_EQ(hipIpcGetMemHandle(handle, ptr), hipSuccess);
  return ptr;
}

// Small blocks in one chunk, a large block, peer opens twice and after a close, a freed small
// block's handle while its chunk lives, a stale handle, a copy from freed memory, capacity.
Transcript script(DeviceMemory memory, std::uint64_t seed) {
  Transcript t;
  auto code = [&](hipError_t e) { t.codes.push_back(static_cast<int>(e)); };
  auto pointer = [&](void* p) { t.pointers.push_back(reinterpret_cast<std::uintptr_t>(p)); };
  beginRun(seed, memory);
  setDeviceMemory(3, std::size_t{8} << 20);
  hipIpcMemHandle_t ha{}, hb{}, hbig{};
  void* a = allocOn(1, 4096, &ha);
  void* b = allocOn(1, 4096, &hb);
  void* big = allocOn(2, std::size_t{4} << 20, &hbig);
  for (void* p : {a, b, big}) pointer(p);
  t.generations = {generationOf(a, 1), generationOf(b, 1), generationOf(big, 2)};
  t.memfdsHeld = ownSegments().size();
  // Fresh memory, then a pattern through the owner.
  t.words.push_back(word(a));
  t.words.push_back(word(static_cast<char*>(big) + (std::size_t{3} << 20)));
  const std::uint64_t pattern = 0x5EED'0000'0000'0001ULL;
  std::memcpy(a, &pattern, sizeof pattern);
  std::memcpy(static_cast<char*>(big) + (std::size_t{3} << 20), &pattern, sizeof pattern);

  code(hipSetDevice(3));
  void* pa = nullptr;
  void* pa2 = nullptr;
  void* pbig = nullptr;
  code(hipIpcOpenMemHandle(&pa, ha, hipIpcMemLazyEnablePeerAccess));
  code(hipIpcOpenMemHandle(&pa2, ha, hipIpcMemLazyEnablePeerAccess));
  code(hipIpcOpenMemHandle(&pbig, hbig, hipIpcMemLazyEnablePeerAccess));
  for (void* p : {pa, pa2, pbig}) pointer(p);
  t.same.push_back(pa == pa2);
  t.same.push_back(pa == a);
  if (pa != nullptr) t.words.push_back(word(pa));
  if (pbig != nullptr) {
    t.words.push_back(word(static_cast<char*>(pbig) + (std::size_t{3} << 20)));
    const std::uint64_t back = ~pattern;
    std::memcpy(pbig, &back, sizeof back);  // through the peer, read by the owner
    t.words.push_back(word(big));
  }
  code(hipIpcCloseMemHandle(pa));
  code(hipIpcCloseMemHandle(pa2));
  code(hipIpcCloseMemHandle(pa2));  // closed twice: refused
  void* again = nullptr;
  code(hipIpcOpenMemHandle(&again, ha, hipIpcMemLazyEnablePeerAccess));
  pointer(again);
  t.same.push_back(again == pa);  // never the closed mapping's address again in a run
  if (again != nullptr) t.words.push_back(word(again));
  code(hipIpcCloseMemHandle(again));
  code(hipIpcCloseMemHandle(pbig));

  // A freed small block's handle opens while its chunk lives; a freed large block's is stale.
  code(hipSetDevice(1));
  code(hipFree(a));
  code(hipFree(big));
  code(hipSetDevice(3));
  void* freedSmall = nullptr;
  code(hipIpcOpenMemHandle(&freedSmall, ha, hipIpcMemLazyEnablePeerAccess));
  if (freedSmall != nullptr) code(hipIpcCloseMemHandle(freedSmall));
  void* stale = nullptr;
  code(hipIpcOpenMemHandle(&stale, hbig, hipIpcMemLazyEnablePeerAccess));
  std::uint64_t copied = 0;
  code(hipMemcpy(&copied, big, sizeof copied, hipMemcpyDeviceToHost));
  (void)hipGetLastError();

  // Capacity: past device 3's 8 MiB, out of memory; within it, a block.
  void* tooBig = nullptr;
  code(hipMalloc(&tooBig, std::size_t{16} << 20));
  void* fits = nullptr;
  code(hipMalloc(&fits, std::size_t{6} << 20));
  pointer(fits);
  if (fits != nullptr) code(hipFree(fits));
  (void)hipGetLastError();
  code(hipSetDevice(1));
  code(hipFree(b));
  (void)hipGetLastError();
  resetAll();
  return t;
}

TEST_F(MockHipArena, TheArenaAnswersAScriptOfCallsAsTheMemfdSegmentsDo) {
  const Transcript segments = script(DeviceMemory::kSegments, 11);
  const Transcript arena = script(DeviceMemory::kArena, 11);
  EXPECT_EQ(arena.codes, segments.codes);
  EXPECT_EQ(arena.words, segments.words);
  EXPECT_EQ(arena.same, segments.same);
  EXPECT_EQ(arena.generations, segments.generations);
  // The script's own sanity, so that the comparison means something: fresh memory is zeros, the
  // pattern crosses both ways, a re-open is a new address, the stale handle is refused.
  ASSERT_GE(segments.words.size(), 6u);
  EXPECT_EQ(segments.words[0], 0u);
  EXPECT_EQ(segments.words[1], 0u);
  EXPECT_EQ(segments.words[2], 0x5EED'0000'0000'0001ULL);
  EXPECT_EQ(segments.words[4], ~0x5EED'0000'0000'0001ULL);
  EXPECT_EQ(segments.same, (std::vector<bool>{true, false, false}));
  EXPECT_NE(std::set<int>(segments.codes.begin(), segments.codes.end()).size(), 1u);
  // Only the memfd path holds memfds.
  EXPECT_GT(segments.memfdsHeld, 0u);
  EXPECT_EQ(arena.memfdsHeld, 0u);
  EXPECT_EQ(deviceMemoryKind(), DeviceMemory::kArena);
}

TEST_F(MockHipArena, TheSameSeedGetsTheSamePointersAndTheNextRunFreshZeros) {
  // The first run wrote its pattern where the second finds fresh memory: read as zeros again.
  const Transcript first = script(DeviceMemory::kArena, 5);
  const Transcript second = script(DeviceMemory::kArena, 5);
  EXPECT_EQ(second.words, first.words) << "a run past the first reads what the one before wrote";
  EXPECT_EQ(second, first);
  EXPECT_EQ(second.pointers, first.pointers);
  std::set<std::uint64_t> distinct;
  for (std::uint64_t p : first.pointers) {
    if (p != 0) distinct.insert(p);
  }
  // a, b, big, pa (== pa2), pbig, again, fits: every one its own address within the run.
  EXPECT_EQ(distinct.size(), 7u);
  // The seed moves the pointers (one of a few starts: some seed of a handful differs).
  bool moved = false;
  for (std::uint64_t seed = 6; seed < 14 && !moved; ++seed) {
    moved = script(DeviceMemory::kArena, seed).pointers != first.pointers;
  }
  EXPECT_TRUE(moved);
}

TEST_F(MockHipArena, RunsAfterTheFirstMakeNoFileAndMapNoView) {
  (void)script(DeviceMemory::kArena, 3);
  const Arena::Stats before = Arena::get().stats();
  for (std::uint64_t seed = 0; seed < 4; ++seed) (void)script(DeviceMemory::kArena, seed);
  const Arena::Stats after = Arena::get().stats();
  EXPECT_EQ(after.files, before.files);
  EXPECT_EQ(after.views, before.views);
  EXPECT_GT(after.segments, before.segments);
  EXPECT_GT(after.zeroedBytes, before.zeroedBytes) << "what the runs wrote was zeroed";
}

TEST_F(MockHipArena, SomethingLeftFromBeforeKeepsTheArenaFromRewinding) {
  beginRun(9, DeviceMemory::kArena);
  hipIpcMemHandle_t handle{};
  void* left = allocOn(1, std::size_t{4} << 20, &handle);
  std::memset(left, 0xAB, 64);
  // A new run while `left` lives: the memory kind and addresses go on, nothing reused or zeroed.
  beginRun(9, DeviceMemory::kSegments);
  EXPECT_EQ(deviceMemoryKind(), DeviceMemory::kArena);
  void* next = allocOn(1, std::size_t{4} << 20, &handle);
  EXPECT_NE(next, left);
  EXPECT_EQ(static_cast<unsigned char*>(left)[63], 0xAB);
  EXPECT_EQ(static_cast<unsigned char*>(next)[0], 0);
  ASSERT_EQ(hipFree(left), hipSuccess);
  ASSERT_EQ(hipFree(next), hipSuccess);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// Where the memfd runtime would fault on memory a run gave back, the arena's poisoning makes ASan
// report it: a freed block, a closed peer mapping, the hole after a segment.
TEST_F(MockHipArena, UnderAsanMemoryGivenBackIsPoisoned) {
  if (!kAsan) GTEST_SKIP() << "an ASan build only (ci/sanitizers.sh)";
  // A forked child forgets the arena (its views unmapped at fork): the death tests re-execute.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  beginRun(2, DeviceMemory::kArena);
  hipIpcMemHandle_t handle{};
  auto* block = static_cast<volatile unsigned char*>(allocOn(1, std::size_t{4} << 20, &handle));
  block[0] = 1;
  ASSERT_EQ(hipSetDevice(3), hipSuccess);
  void* mapped = nullptr;
  ASSERT_EQ(hipIpcOpenMemHandle(&mapped, handle, hipIpcMemLazyEnablePeerAccess), hipSuccess);
  auto* peer = static_cast<volatile unsigned char*>(mapped);
  EXPECT_EQ(peer[0], 1);
  EXPECT_DEATH((void)block[(std::size_t{4} << 20) + 8], "use-after-poison");  // past its end
  ASSERT_EQ(hipIpcCloseMemHandle(mapped), hipSuccess);
  EXPECT_DEATH((void)peer[0], "use-after-poison");
  ASSERT_EQ(hipSetDevice(1), hipSuccess);
  ASSERT_EQ(hipFree(const_cast<unsigned char*>(block)), hipSuccess);
  EXPECT_DEATH((void)block[0], "use-after-poison");
}

}  // namespace
}  // namespace peerconf::mock_hip::detail
