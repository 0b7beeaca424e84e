// hipGetErrorName and hipGetErrorString of the mocked HIP runtime (error_text.cc): current HIP's
// names and texts, deprecated aliases, and what an unknown code reads as.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "mock_hip/hip_runtime_api.h"

namespace peerconf::mock_hip {
namespace {

TEST(MockHipErrorText, ErrorNamesAndTextsAreHips) {
  EXPECT_STREQ(hipGetErrorString(hipSuccess), "no error");
  EXPECT_STREQ(hipGetErrorString(hipErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(hipGetErrorString(hipErrorInvalidContext), "invalid device context");
  EXPECT_STREQ(hipGetErrorString(hipErrorOutOfMemory), "out of memory");
  EXPECT_STREQ(hipGetErrorString(hipErrorMapFailed), "mapping of buffer object failed");
  EXPECT_STREQ(hipGetErrorString(static_cast<hipError_t>(12345)), "unknown error");
  EXPECT_STREQ(hipGetErrorName(hipErrorInvalidHandle), "hipErrorInvalidHandle");
  EXPECT_STREQ(hipGetErrorName(hipErrorInvalidDevice), "hipErrorInvalidDevice");
  EXPECT_EQ(static_cast<int>(hipErrorRuntimeOther), 1053);
  EXPECT_EQ(static_cast<int>(hipErrorNoDevice), 100);
}

TEST(MockHipErrorText, DeprecatedAliasesReadAsTheCurrentName) {
  EXPECT_STREQ(hipGetErrorName(hipErrorMemoryAllocation), "hipErrorOutOfMemory");
  EXPECT_STREQ(hipGetErrorName(hipErrorInitializationError), "hipErrorNotInitialized");
  EXPECT_STREQ(hipGetErrorName(hipErrorMapBufferObjectFailed), "hipErrorMapFailed");
  // The name is not the text (ROCm 5.2 returned the name from both).
  EXPECT_STRNE(hipGetErrorName(hipErrorInvalidValue), hipGetErrorString(hipErrorInvalidValue));
}

TEST(MockHipErrorText, EveryCodeHasAHipNameAndAText) {
  for (int code = -2; code < 1100; ++code) {
    const auto error = static_cast<hipError_t>(code);
    const char* name = hipGetErrorName(error);
    const char* text = hipGetErrorString(error);
    ASSERT_NE(name, nullptr) << code;
    ASSERT_NE(text, nullptr) << code;
    EXPECT_EQ(std::strncmp(name, "hip", 3), 0) << code << ": " << name;
    EXPECT_GT(std::strlen(text), 0u) << code;
  }
  EXPECT_STREQ(hipGetErrorName(static_cast<hipError_t>(12345)), "hipErrorUnknown");
}

}  // namespace
}  // namespace peerconf::mock_hip
