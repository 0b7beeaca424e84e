// The kernels of myteam's layouts (counter_flags.cu), in a build with peerconf's GPU kernels.
#pragma once

namespace myteam {

// Gives every layout of kCounterFlagsEntries (registered by main) its kernels for `--runtime gpu`.
void registerCounterFlagsGpu();

}  // namespace myteam
