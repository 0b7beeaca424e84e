// Whether this test binary runs under a sanitizer that slows it down, and by how much a test's
// wall-clock allowances (never its deadlines) stretch for it.
#pragma once

// ASan and TSan reserve terabytes of address space for their shadow memory and inflate the peak
// (PEERCONF_SHADOW_SANITIZER: tests of memory limits leave those checks out under them).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PEERCONF_SHADOW_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PEERCONF_SHADOW_SANITIZER 1
#endif
#endif

namespace peerconf::testing {

// How many times longer an allowance for scheduling (how late a woken thread may run) is under a
// sanitizer: TSan runs threaded code 5-15 times slower, and on a 2-core box with 16 ranks the
// instrumented wake-ups of a timed-out collective took longer than 1 s past the deadline (CI,
// 2026-12-01). The deadline itself is not stretched: what is checked stays "not before".
#ifdef PEERCONF_SHADOW_SANITIZER
inline constexpr int kSanitizerSlowdown = 10;
#else
inline constexpr int kSanitizerSlowdown = 1;
#endif

}  // namespace peerconf::testing
