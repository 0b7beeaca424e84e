// hipGetErrorName / hipGetErrorString: the names and texts of current HIP (ROCm 5.2 itself
// returns the name from both), so reports read the same on the mock as on a newer runtime.
#include "mock_hip/hip_runtime_api.h"

namespace peerconf::mock_hip {

namespace {

struct ErrorText {
  const char* name;
  const char* text;
};

// A switch over every hipError_t: a flat table reads best whole (and -Wswitch checks it).
// NOLINTNEXTLINE(readability-function-size): one case an error code, nothing to split
ErrorText errorText(hipError_t error) {
  switch (error) {
    case hipSuccess:
      return {"hipSuccess", "no error"};
    case hipErrorInvalidValue:
      return {"hipErrorInvalidValue", "invalid argument"};
    case hipErrorOutOfMemory:
      return {"hipErrorOutOfMemory", "out of memory"};
    case hipErrorNotInitialized:
      return {"hipErrorNotInitialized", "initialization error"};
    case hipErrorDeinitialized:
      return {"hipErrorDeinitialized", "driver shutting down"};
    case hipErrorProfilerDisabled:
      return {"hipErrorProfilerDisabled", "profiler disabled while using external profiling tool"};
    case hipErrorProfilerNotInitialized:
      return {"hipErrorProfilerNotInitialized", "profiler is not initialized"};
    case hipErrorProfilerAlreadyStarted:
      return {"hipErrorProfilerAlreadyStarted", "profiler already started"};
    case hipErrorProfilerAlreadyStopped:
      return {"hipErrorProfilerAlreadyStopped", "profiler already stopped"};
    case hipErrorInvalidConfiguration:
      return {"hipErrorInvalidConfiguration", "invalid configuration argument"};
    case hipErrorInvalidPitchValue:
      return {"hipErrorInvalidPitchValue", "invalid pitch argument"};
    case hipErrorInvalidSymbol:
      return {"hipErrorInvalidSymbol", "invalid device symbol"};
    case hipErrorInvalidDevicePointer:
      return {"hipErrorInvalidDevicePointer", "invalid device pointer"};
    case hipErrorInvalidMemcpyDirection:
      return {"hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"};
    case hipErrorInsufficientDriver:
      return {"hipErrorInsufficientDriver", "driver version is insufficient for runtime version"};
    case hipErrorMissingConfiguration:
      return {"hipErrorMissingConfiguration", "__global__ function call is not configured"};
    case hipErrorPriorLaunchFailure:
      return {"hipErrorPriorLaunchFailure", "unspecified launch failure in prior launch"};
    case hipErrorInvalidDeviceFunction:
      return {"hipErrorInvalidDeviceFunction", "invalid device function"};
    case hipErrorNoDevice:
      return {"hipErrorNoDevice", "no ROCm-capable device is detected"};
    case hipErrorInvalidDevice:
      return {"hipErrorInvalidDevice", "invalid device ordinal"};
    case hipErrorInvalidImage:
      return {"hipErrorInvalidImage", "device kernel image is invalid"};
    case hipErrorInvalidContext:
      return {"hipErrorInvalidContext", "invalid device context"};
    case hipErrorContextAlreadyCurrent:
      return {"hipErrorContextAlreadyCurrent", "context is already current context"};
    case hipErrorMapFailed:
      return {"hipErrorMapFailed", "mapping of buffer object failed"};
    case hipErrorUnmapFailed:
      return {"hipErrorUnmapFailed", "unmapping of buffer object failed"};
    case hipErrorArrayIsMapped:
      return {"hipErrorArrayIsMapped", "array is mapped"};
    case hipErrorAlreadyMapped:
      return {"hipErrorAlreadyMapped", "resource already mapped"};
    case hipErrorNoBinaryForGpu:
      return {"hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"};
    case hipErrorAlreadyAcquired:
      return {"hipErrorAlreadyAcquired", "resource already acquired"};
    case hipErrorNotMapped:
      return {"hipErrorNotMapped", "resource not mapped"};
    case hipErrorNotMappedAsArray:
      return {"hipErrorNotMappedAsArray", "resource not mapped as array"};
    case hipErrorNotMappedAsPointer:
      return {"hipErrorNotMappedAsPointer", "resource not mapped as pointer"};
    case hipErrorECCNotCorrectable:
      return {"hipErrorECCNotCorrectable", "uncorrectable ECC error encountered"};
    case hipErrorUnsupportedLimit:
      return {"hipErrorUnsupportedLimit", "limit is not supported on this architecture"};
    case hipErrorContextAlreadyInUse:
      return {"hipErrorContextAlreadyInUse",
              "exclusive-thread device already in use by a different thread"};
    case hipErrorPeerAccessUnsupported:
      return {"hipErrorPeerAccessUnsupported",
              "peer access is not supported between these two devices"};
    case hipErrorInvalidKernelFile:
      return {"hipErrorInvalidKernelFile", "invalid kernel file"};
    case hipErrorInvalidGraphicsContext:
      return {"hipErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context"};
    case hipErrorInvalidSource:
      return {"hipErrorInvalidSource", "device kernel image is invalid"};
    case hipErrorFileNotFound:
      return {"hipErrorFileNotFound", "file not found"};
    case hipErrorSharedObjectSymbolNotFound:
      return {"hipErrorSharedObjectSymbolNotFound", "shared object symbol not found"};
    case hipErrorSharedObjectInitFailed:
      return {"hipErrorSharedObjectInitFailed", "shared object initialization failed"};
    case hipErrorOperatingSystem:
      return {"hipErrorOperatingSystem", "OS call failed or operation not supported on this OS"};
    case hipErrorInvalidHandle:
      return {"hipErrorInvalidHandle", "invalid resource handle"};
    case hipErrorIllegalState:
      return {"hipErrorIllegalState", "the operation cannot be performed in the present state"};
    case hipErrorNotFound:
      return {"hipErrorNotFound", "named symbol not found"};
    case hipErrorNotReady:
      return {"hipErrorNotReady", "device not ready"};
    case hipErrorIllegalAddress:
      return {"hipErrorIllegalAddress", "an illegal memory access was encountered"};
    case hipErrorLaunchOutOfResources:
      return {"hipErrorLaunchOutOfResources", "too many resources requested for launch"};
    case hipErrorLaunchTimeOut:
      return {"hipErrorLaunchTimeOut", "the launch timed out and was terminated"};
    case hipErrorPeerAccessAlreadyEnabled:
      return {"hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled"};
    case hipErrorPeerAccessNotEnabled:
      return {"hipErrorPeerAccessNotEnabled", "peer access has not been enabled"};
    case hipErrorSetOnActiveProcess:
      return {"hipErrorSetOnActiveProcess", "cannot set while device is active in this process"};
    case hipErrorContextIsDestroyed:
      return {"hipErrorContextIsDestroyed", "context is destroyed"};
    case hipErrorAssert:
      return {"hipErrorAssert", "device-side assert triggered"};
    case hipErrorHostMemoryAlreadyRegistered:
      return {"hipErrorHostMemoryAlreadyRegistered",
              "part or all of the requested memory range is already mapped"};
    case hipErrorHostMemoryNotRegistered:
      return {"hipErrorHostMemoryNotRegistered",
              "pointer does not correspond to a registered memory region"};
    case hipErrorLaunchFailure:
      return {"hipErrorLaunchFailure", "unspecified launch failure"};
    case hipErrorCooperativeLaunchTooLarge:
      return {"hipErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"};
    case hipErrorNotSupported:
      return {"hipErrorNotSupported", "operation not supported"};
    case hipErrorStreamCaptureUnsupported:
      return {"hipErrorStreamCaptureUnsupported",
              "operation not permitted when stream is capturing"};
    case hipErrorStreamCaptureInvalidated:
      return {"hipErrorStreamCaptureInvalidated",
              "operation failed due to a previous error during capture"};
    case hipErrorStreamCaptureMerge:
      return {"hipErrorStreamCaptureMerge",
              "operation would result in a merge of separate capture sequences"};
    case hipErrorStreamCaptureUnmatched:
      return {"hipErrorStreamCaptureUnmatched",
              "capture was not ended in the same stream as it began"};
    case hipErrorStreamCaptureUnjoined:
      return {"hipErrorStreamCaptureUnjoined", "capturing stream has unjoined work"};
    case hipErrorStreamCaptureIsolation:
      return {"hipErrorStreamCaptureIsolation",
              "dependency created on uncaptured work in another stream"};
    case hipErrorStreamCaptureImplicit:
      return {"hipErrorStreamCaptureImplicit",
              "operation would make the legacy stream depend on a capturing blocking stream"};
    case hipErrorCapturedEvent:
      return {"hipErrorCapturedEvent",
              "operation not permitted on an event last recorded in a capturing stream"};
    case hipErrorStreamCaptureWrongThread:
      return {"hipErrorStreamCaptureWrongThread",
              "attempt to terminate a thread-local capture sequence from another thread"};
    case hipErrorGraphExecUpdateFailure:
      return {"hipErrorGraphExecUpdateFailure",
              "the graph update was not performed because it included changes which violated "
              "constraints specific to instantiated graph update"};
    case hipErrorUnknown:
      return {"hipErrorUnknown", "unknown error"};
    case hipErrorRuntimeMemory:
      return {"hipErrorRuntimeMemory", "runtime memory call returned error"};
    case hipErrorRuntimeOther:
      return {"hipErrorRuntimeOther", "runtime call other than memory returned error"};
    case hipErrorTbd:
      return {"hipErrorTbd", "unknown error"};
  }
  return {"hipErrorUnknown", "unknown error"};
}

}  // namespace

const char* hipGetErrorName(hipError_t error) { return errorText(error).name; }

const char* hipGetErrorString(hipError_t error) { return errorText(error).text; }

}  // namespace peerconf::mock_hip
