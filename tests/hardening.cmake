# Hardening (issue 8): the target the sanitizer presets build, the libFuzzer targets, the install
# consumer test and the crash/hang sweep. Owned by hardening; see ci/sanitizers.sh, ci/fuzz.sh,
# ci/sweep.py.

# peerconf_sanitizer_targets: what `cmake --build --preset asan|tsan` builds, i.e. what the
# sanitizer test presets run (labels unit, property, scenario; not mpi, not gpu, not exhaustive):
# every test executable of tests/ except those linking MPI directly and those whose tests
# (peerconf_add_test's LABELS) carry none of the sanitizer labels, and the `peerconf` command.
# Collected at the end of tests/ so that tests added by any area's list are included without
# editing this file. The list is written to sanitizer_targets.txt in the build dir (ci/sanitizers.sh
# prints it).
function(peerconf_hardening_collect_sanitizer_targets)
  get_property(targets DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} PROPERTY BUILDSYSTEM_TARGETS)
  set(wanted peerconf)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(excluded ${target} EXCLUDE_FROM_ALL)
    get_target_property(libs ${target} LINK_LIBRARIES)
    if(NOT type STREQUAL "EXECUTABLE" OR excluded)
      continue()
    endif()
    if("MPI::MPI_CXX" IN_LIST libs OR "MPI::MPI_C" IN_LIST libs)
      continue()  # an mpiexec test (label mpi): not run under sanitizers (ci/sanitizers.sh)
    endif()
    get_target_property(labels ${target} PEERCONF_TEST_LABELS)
    if(labels AND NOT labels MATCHES "(^|;)(unit|property|scenario)(;|$)")
      continue()  # e.g. label exhaustive: the sanitizer test presets do not run it
    endif()
    list(APPEND wanted ${target})
  endforeach()
  string(REPLACE ";" "\n" listing "${wanted}")
  file(WRITE ${PROJECT_BINARY_DIR}/sanitizer_targets.txt "${listing}\n")
  add_custom_target(peerconf_sanitizer_targets)
  add_dependencies(peerconf_sanitizer_targets ${wanted})
endfunction()
cmake_language(DEFER CALL peerconf_hardening_collect_sanitizer_targets)

option(PEERCONF_FUZZ "Build the libFuzzer targets (clang; see the fuzz preset)" OFF)
if(PEERCONF_FUZZ)
  add_subdirectory(${CMAKE_CURRENT_LIST_DIR}/fuzz ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
endif()

# The mocked runtime's handle and segment security: fuzzing findings and cross-process refusals
# that tests/mock_hip_test.cc does not cover.
if(TARGET peerconf::mock_hip)
  peerconf_add_test(mock_hip_hardening_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/mock_hip_hardening_test.cc
    LIBS peerconf::mock_hip
    LABELS unit)
endif()

# install/consumer: `cmake --install` into a staged prefix, then a separate project finds the
# package (find_package(peerconf)), builds against it and runs a 2-rank handshake on the mocked
# runtime. RUN_SERIAL: it builds, and CI has two cores.
add_test(NAME install/consumer
         COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
                 -DSTAGE=${CMAKE_CURRENT_BINARY_DIR}/install/stage
                 -DCONSUMER_SOURCE=${CMAKE_CURRENT_LIST_DIR}/install/consumer
                 -DCONSUMER_BUILD=${CMAKE_CURRENT_BINARY_DIR}/install/consumer
                 -DGENERATOR=${CMAKE_GENERATOR} -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
                 "-DCXX_FLAGS=${CMAKE_CXX_FLAGS}" "-DLINKER_FLAGS=${CMAKE_EXE_LINKER_FLAGS}"
                 -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
                 -P ${CMAKE_CURRENT_LIST_DIR}/install/install_check.cmake)
set_tests_properties(install/consumer PROPERTIES LABELS unit TIMEOUT 300 RUN_SERIAL ON)
