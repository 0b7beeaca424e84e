// gMock mocks of both seams, shared by the unit tests.
#pragma once

#include <gmock/gmock.h>

#include "group.h"
#include "ipc_backend.h"

namespace peerconf::testing {

class MockIpcBackend : public IpcBackend {
 public:
  MOCK_METHOD(int, rank, (), (const, override));
  MOCK_METHOD(DevicePtr, allocUncached, (std::size_t nbytes), (override));
  MOCK_METHOD(DevicePtr, allocDevice, (std::size_t nbytes), (override));
  MOCK_METHOD(void, freeDeviceMem, (DevicePtr ptr), (override));
  MOCK_METHOD(IpcHandle, getMemHandle, (DevicePtr ptr), (override));
  MOCK_METHOD(DevicePtr, openMemHandle, (const IpcHandle& handle, int peer), (override));
  MOCK_METHOD(void, closeMemHandle, (DevicePtr ptr, int peer), (override));
  MOCK_METHOD(void, copyToDevice, (DevicePtr dst, const void* src, std::size_t nbytes), (override));
  MOCK_METHOD(void, copyToHost, (void* dst, DevicePtr src, std::size_t nbytes), (override));
};

class MockGroup : public Group {
 public:
  MOCK_METHOD(int, rank, (), (const, override));
  MOCK_METHOD(int, size, (), (const, override));
  MOCK_METHOD(int, allReduceMin, (int value), (override));
  MOCK_METHOD(std::vector<std::vector<std::byte>>, allGather, (std::span<const std::byte> bytes),
              (override));
};

}  // namespace peerconf::testing
