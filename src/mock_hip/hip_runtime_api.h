// The mocked HIP runtime ("fake HIP"): the HIP API functions the GPU backend calls, with HIP's
// names, signatures and error codes, implemented over shared memory (memfd segments) so the
// unchanged backend runs on a CPU box, with ranks as threads or as processes. Everything lives in
// peerconf::mock_hip so that it links next to the real libamdhip64 without clashing; do not
// include this header and <hip/hip_runtime_api.h> in the same translation unit.
//
// Semantics that matter to callers (see control.h for the ledger, fault hooks and job id):
// - The current device is per thread; a thread that never called hipSetDevice uses device 0.
//   The number of devices is PEERCONF_MOCK_DEVICES (default 64).
// - A device pointer is the host address of a MAP_SHARED mapping: host code may read and write it.
// - Every allocation is its own shared-memory segment, so its IPC handle can be opened by another
//   thread (on another device) or by another process of the same job (control.h, segmentName).
#pragma once

#include <cstddef>

namespace peerconf::mock_hip {

// HIP's error codes, with HIP's numeric values (hip_runtime_api.h of ROCm). The enums here have
// int as their underlying type: a C caller may pass any int, and the mock must answer a code or
// kind it does not know (an error, a name of its own) without undefined behaviour (UBSan's enum
// check under clang).
enum [[nodiscard]] hipError_t : int{
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorMemoryAllocation = 2,  // deprecated alias
    hipErrorNotInitialized = 3,
    hipErrorInitializationError = 3,  // deprecated alias
    hipErrorDeinitialized = 4,
    hipErrorProfilerDisabled = 5,
    hipErrorProfilerNotInitialized = 6,
    hipErrorProfilerAlreadyStarted = 7,
    hipErrorProfilerAlreadyStopped = 8,
    hipErrorInvalidConfiguration = 9,
    hipErrorInvalidPitchValue = 12,
    hipErrorInvalidSymbol = 13,
    hipErrorInvalidDevicePointer = 17,
    hipErrorInvalidMemcpyDirection = 21,
    hipErrorInsufficientDriver = 35,
    hipErrorMissingConfiguration = 52,
    hipErrorPriorLaunchFailure = 53,
    hipErrorInvalidDeviceFunction = 98,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorInvalidImage = 200,
    hipErrorInvalidContext = 201,
    hipErrorContextAlreadyCurrent = 202,
    hipErrorMapFailed = 205,
    hipErrorMapBufferObjectFailed = 205,  // deprecated alias
    hipErrorUnmapFailed = 206,
    hipErrorArrayIsMapped = 207,
    hipErrorAlreadyMapped = 208,
    hipErrorNoBinaryForGpu = 209,
    hipErrorAlreadyAcquired = 210,
    hipErrorNotMapped = 211,
    hipErrorNotMappedAsArray = 212,
    hipErrorNotMappedAsPointer = 213,
    hipErrorECCNotCorrectable = 214,
    hipErrorUnsupportedLimit = 215,
    hipErrorContextAlreadyInUse = 216,
    hipErrorPeerAccessUnsupported = 217,
    hipErrorInvalidKernelFile = 218,
    hipErrorInvalidGraphicsContext = 219,
    hipErrorInvalidSource = 300,
    hipErrorFileNotFound = 301,
    hipErrorSharedObjectSymbolNotFound = 302,
    hipErrorSharedObjectInitFailed = 303,
    hipErrorOperatingSystem = 304,
    hipErrorInvalidHandle = 400,
    hipErrorInvalidResourceHandle = 400,  // deprecated alias
    hipErrorIllegalState = 401,
    hipErrorNotFound = 500,
    hipErrorNotReady = 600,
    hipErrorIllegalAddress = 700,
    hipErrorLaunchOutOfResources = 701,
    hipErrorLaunchTimeOut = 702,
    hipErrorPeerAccessAlreadyEnabled = 704,
    hipErrorPeerAccessNotEnabled = 705,
    hipErrorSetOnActiveProcess = 708,
    hipErrorContextIsDestroyed = 709,
    hipErrorAssert = 710,
    hipErrorHostMemoryAlreadyRegistered = 712,
    hipErrorHostMemoryNotRegistered = 713,
    hipErrorLaunchFailure = 719,
    hipErrorCooperativeLaunchTooLarge = 720,
    hipErrorNotSupported = 801,
    hipErrorStreamCaptureUnsupported = 900,
    hipErrorStreamCaptureInvalidated = 901,
    hipErrorStreamCaptureMerge = 902,
    hipErrorStreamCaptureUnmatched = 903,
    hipErrorStreamCaptureUnjoined = 904,
    hipErrorStreamCaptureIsolation = 905,
    hipErrorStreamCaptureImplicit = 906,
    hipErrorCapturedEvent = 907,
    hipErrorStreamCaptureWrongThread = 908,
    hipErrorGraphExecUpdateFailure = 910,
    hipErrorUnknown = 999,
    hipErrorRuntimeMemory = 1052,
    hipErrorRuntimeOther = 1053,
    hipErrorTbd = 1054,
};

inline constexpr std::size_t HIP_IPC_HANDLE_SIZE = 64;

// Opaque to callers, as in HIP; control.h's decodeHandle reads the mock's layout.
struct hipIpcMemHandle_t {
  char reserved[HIP_IPC_HANDLE_SIZE];
};
static_assert(sizeof(hipIpcMemHandle_t) == HIP_IPC_HANDLE_SIZE);

enum hipMemcpyKind : int {
  hipMemcpyHostToHost = 0,
  hipMemcpyHostToDevice = 1,
  hipMemcpyDeviceToHost = 2,
  hipMemcpyDeviceToDevice = 3,
  hipMemcpyDefault = 4,
};

// hipExtMallocWithFlags flags (values of current ROCm; 5.2 lacks hipDeviceMallocUncached).
inline constexpr unsigned int hipDeviceMallocDefault = 0x0;
inline constexpr unsigned int hipDeviceMallocFinegrained = 0x1;
inline constexpr unsigned int hipMallocSignalMemory = 0x2;
inline constexpr unsigned int hipDeviceMallocUncached = 0x3;

// hipIpcOpenMemHandle flag (CUDA's value; the only flag accepted besides 0).
inline constexpr unsigned int hipIpcMemLazyEnablePeerAccess = 0x1;

// Devices. hipSetDevice: hipErrorInvalidDevice outside [0, count).
hipError_t hipSetDevice(int deviceId);
hipError_t hipGetDevice(int* deviceId);
// hipErrorNoDevice (count 0) when PEERCONF_MOCK_DEVICES=0.
hipError_t hipGetDeviceCount(int* count);
// Memory is host-coherent: a full fence, always hipSuccess.
hipError_t hipDeviceSynchronize();
// Total is a fixed 64 GiB; free subtracts what the current device has allocated.
hipError_t hipMemGetInfo(std::size_t* free, std::size_t* total);

// Allocation. A zero size returns nullptr and hipSuccess without allocating (as HIP does).
hipError_t hipMalloc(void** ptr, std::size_t size);
hipError_t hipExtMallocWithFlags(void** ptr, std::size_t sizeBytes, unsigned int flags);
// hipErrorInvalidValue for a pointer that is not a live allocation (freed twice, never
// allocated, or an IPC mapping); nullptr is a no-op.
hipError_t hipFree(void* ptr);

// IPC. hipIpcGetMemHandle: `devPtr` must be the base of a live allocation of this process.
hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* devPtr);
// Maps the segment holding the allocation (a 2 MiB chunk for a block below 2 MiB, as CUDA's
// allocator sub-allocates them) once per device and process, and counts the opens: opening a
// handle again gives the same address, each open needs its close, the last unmaps (as CUDA).
// Refusals: not a mock handle (garbage or corrupted), a handle of another job, or a stale handle
// (its segment freed; a freed small block's handle opens while its chunk lives, onto whatever is
// there now, as on CUDA): hipErrorInvalidValue; the owner process is gone: hipErrorInvalidHandle
// (as CUDA); a handle exported by this process on the current device: hipErrorInvalidContext
// (another process opens it on any device, the exporter's own included; thread ranks of one
// process count as separate processes while their devices differ).
hipError_t hipIpcOpenMemHandle(void** devPtr, hipIpcMemHandle_t handle, unsigned int flags);
// Closes one open; hipErrorInvalidValue for a pointer that is not currently open (closed as often
// as it was opened: e.g. closed twice).
hipError_t hipIpcCloseMemHandle(void* devPtr);

// Copies. Device-side ranges (by `kind`) must lie in a live allocation or mapping of this process.
hipError_t hipMemcpy(void* dst, const void* src, std::size_t sizeBytes, hipMemcpyKind kind);
hipError_t hipMemset(void* dst, int value, std::size_t sizeBytes);

// Errors: HIP's texts ("invalid argument", "invalid device context", ...). hipGetLastError
// returns and clears this thread's last error; hipPeekAtLastError only returns it.
const char* hipGetErrorName(hipError_t error);
const char* hipGetErrorString(hipError_t error);
hipError_t hipGetLastError();
hipError_t hipPeekAtLastError();

}  // namespace peerconf::mock_hip
