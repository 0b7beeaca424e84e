// Looking at an expected exception: caught<E>(call) runs `call` and returns the E it threw;
// rethrown<E>(ptr) returns the exception a std::exception_ptr holds (a HandshakeError's cause),
// as E. Both add a test failure and return nullopt when there is no exception (the call returned,
// the pointer is null); an exception of another type propagates, and gtest reports it.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <optional>
#include <utility>

namespace peerconf::testing {

template <typename E, typename Call>
std::optional<E> caught(Call&& call) {
  try {
    std::forward<Call>(call)();
  } catch (const E& e) {
    return e;
  }
  ADD_FAILURE() << "no " << ::testing::internal::GetTypeName<E>() << " thrown";
  return std::nullopt;
}

template <typename E>
std::optional<E> rethrown(const std::exception_ptr& ptr) {
  if (!ptr) {
    ADD_FAILURE() << "no exception held (expected " << ::testing::internal::GetTypeName<E>() << ")";
    return std::nullopt;
  }
  return caught<E>([&] { std::rethrow_exception(ptr); });
}

}  // namespace peerconf::testing
