// Recording decorators: one helper wraps every call as call + return/throw.
#include "launch/recording.h"

#include <exception>

#include "model/text.h"

namespace peerconf::harness::launch {

using model::EventKind;
using model::EventLog;
using model::hexPtr;

namespace {

std::string ptrDetail(DevicePtr ptr) { return "ptr=" + hexPtr(ptr); }

// Records `what` around `call`; `describe` turns the result into the return's detail.
template <typename Call, typename Describe>
auto recorded(EventLog& log, const char* what, int peer, std::string detail, Call&& call,
              Describe&& describe) {
  log.record(EventKind::kCall, what, peer, std::move(detail));
  try {
    if constexpr (std::is_void_v<decltype(call())>) {
      call();
      log.record(EventKind::kReturn, what, peer);
    } else {
      auto result = call();
      log.record(EventKind::kReturn, what, peer, describe(result));
      return result;
    }
  } catch (const std::exception& e) {
    log.record(EventKind::kThrow, what, peer, e.what());
    throw;
  }
}

constexpr auto kNoDetail = [](const auto&) { return std::string(); };

}  // namespace

DevicePtr RecordingBackend::allocUncached(std::size_t nbytes) {
  return recorded(
      log_, "allocUncached", -1, "bytes=" + std::to_string(nbytes),
      [&] { return inner_.allocUncached(nbytes); }, ptrDetail);
}

DevicePtr RecordingBackend::allocDevice(std::size_t nbytes) {
  return recorded(
      log_, "allocDevice", -1, "bytes=" + std::to_string(nbytes),
      [&] { return inner_.allocDevice(nbytes); }, ptrDetail);
}

void RecordingBackend::freeDeviceMem(DevicePtr ptr) {
  recorded(
      log_, "freeDeviceMem", -1, ptrDetail(ptr), [&] { inner_.freeDeviceMem(ptr); }, kNoDetail);
}

IpcHandle RecordingBackend::getMemHandle(DevicePtr ptr) {
  return recorded(
      log_, "getMemHandle", -1, ptrDetail(ptr), [&] { return inner_.getMemHandle(ptr); },
      kNoDetail);
}

DevicePtr RecordingBackend::openMemHandle(const IpcHandle& handle, int peer) {
  return recorded(
      log_, "openMemHandle", peer, {}, [&] { return inner_.openMemHandle(handle, peer); },
      ptrDetail);
}

void RecordingBackend::closeMemHandle(DevicePtr ptr, int peer) {
  recorded(
      log_, "closeMemHandle", peer, ptrDetail(ptr), [&] { inner_.closeMemHandle(ptr, peer); },
      kNoDetail);
}

void RecordingBackend::copyToDevice(DevicePtr dst, const void* src, std::size_t nbytes) {
  recorded(
      log_, "copyToDevice", -1, ptrDetail(dst), [&] { inner_.copyToDevice(dst, src, nbytes); },
      kNoDetail);
}

void RecordingBackend::copyToHost(void* dst, DevicePtr src, std::size_t nbytes) {
  recorded(
      log_, "copyToHost", -1, ptrDetail(src), [&] { inner_.copyToHost(dst, src, nbytes); },
      kNoDetail);
}

int RecordingGroup::allReduceMin(int value) {
  return recorded(
      log_, "allReduceMin", -1, "in=" + std::to_string(value),
      [&] { return inner_.allReduceMin(value); },
      [](int out) { return "out=" + std::to_string(out); });
}

std::vector<std::vector<std::byte>> RecordingGroup::allGather(std::span<const std::byte> bytes) {
  return recorded(
      log_, "allGather", -1, "bytes=" + std::to_string(bytes.size()),
      [&] { return inner_.allGather(bytes); }, kNoDetail);
}

}  // namespace peerconf::harness::launch
