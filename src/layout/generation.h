// The buffer's generation: how the ranks agree on the value every tag of one buffer carries, so
// that pairs left in reused memory by an earlier buffer can never pass for this buffer's.
#pragma once

#include <cstdint>
#include <functional>

#include "group.h"
#include "layout/layout.h"
#include "layout/tag.h"

namespace peerconf::layout {

// A fresh generation, never 0: random (std::random_device, the clock, the process and a counter);
// on simulated time (the thread's clock, clock.h), drawn from the run's seed.
std::uint32_t drawGeneration();

// True when any word of `buffer` where `layout` keeps a tag (abort word, acknowledgements, every
// slot's tag) already carries `generation`.
bool generationInUse(const Layout& layout, const Word* buffer, std::uint32_t generation);

// The generation a buffer's ranks tag with. Collective over `group`: every rank calls it at the
// same point, after its buffer exists and before any rank writes a pair. Rank 0 draws a candidate
// and all-gathers it; every rank asks `inUse` whether its own memory already holds tags of that
// generation (stale pairs of an earlier buffer at the same addresses) and the ranks agree with a
// MIN all-reduce; on a clash rank 0 draws again. No tag present when the run starts can therefore
// match the agreed generation — not merely with probability 1 - 2^-32. A null group (one rank)
// draws locally. Throws what the group throws, or std::runtime_error after `maxTries` clashes.
std::uint32_t agreeGeneration(Group* group, const std::function<bool(std::uint32_t)>& inUse,
                              int maxTries = 16);

}  // namespace peerconf::layout
