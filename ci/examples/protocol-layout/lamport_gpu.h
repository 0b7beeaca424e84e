// The kernels of myteam's Lamport-style layouts (lamport.cu), in a build with peerconf's GPU
// kernels.
#pragma once

namespace myteam {

// Gives every layout of kLamportEntries (registered by main) its kernels for `--runtime gpu`.
void registerLamportGpu();

}  // namespace myteam
