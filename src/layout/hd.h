// PEERCONF_HD: marks the data-plane protocol's functions as callable from host and device code,
// so the one protocol source serves host threads today and GPU kernels later.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PEERCONF_HD __host__ __device__
#else
#define PEERCONF_HD
#endif
