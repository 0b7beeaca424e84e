# Tests of the device backends: the mocked HIP runtime, the IpcBackend conformance suite per
# implementation, and the backend factory. Test names start with their binary's name so that
# `ctest -R 'mock_hip|ipc_backend'` selects them.

# Sources are named from this file's folder so the list also works when included elsewhere.
set(peerconf_backends_dir ${CMAKE_CURRENT_LIST_DIR})

# peerconf_backends_add_test(NAME SOURCES... LIBS... LABELS...): a gtest binary whose discovered
# tests are named "<NAME>.<Suite>.<Test>".
function(peerconf_backends_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  list(TRANSFORM ARG_SOURCES PREPEND ${peerconf_backends_dir}/)
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${peerconf_backends_dir})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name} TEST_PREFIX "${name}." PROPERTIES LABELS "${ARG_LABELS}"
                       TIMEOUT 120 DISCOVERY_TIMEOUT 60)
endfunction()

peerconf_backends_add_test(mock_hip_test
  SOURCES mock_hip_test.cc
  LIBS peerconf::mock_hip
  LABELS unit)

# The crash sweep (ci/sweep.py) judges and removes only its own job's segments.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME mock_hip_sweep_leaves_foreign_segments
           COMMAND Python3::Interpreter ${peerconf_backends_dir}/sweep_foreign_test.py
                   ${peerconf_backends_dir}/../ci/sweep.py)
  set_tests_properties(mock_hip_sweep_leaves_foreign_segments PROPERTIES LABELS unit
                       SKIP_RETURN_CODE 77 TIMEOUT 60)
endif()

set(peerconf_conformance_sources ipc_backend_conformance.cc ipc_backend_ranks.cc)

peerconf_backends_add_test(ipc_backend_conformance_test
  SOURCES ipc_backend_conformance_test.cc ${peerconf_conformance_sources}
  LIBS peerconf::hip_backend_mock
  LABELS unit)

peerconf_backends_add_test(ipc_backend_factory_test
  SOURCES ipc_backend_factory_test.cc
  LIBS peerconf::backends peerconf::mock_hip
  LABELS unit)

# The GPU builds: compiled and linked whenever configured; they run under label gpu and skip
# (saying what hipGetDeviceCount answered) where there is no device.
foreach(variant IN ITEMS cuda rocm)
  if(TARGET peerconf_hip_backend_${variant})
    peerconf_backends_add_test(ipc_backend_${variant}_conformance_test
      SOURCES ipc_backend_${variant}_conformance_test.cc ${peerconf_conformance_sources}
      LIBS peerconf::hip_backend_${variant}
      LABELS gpu)
  endif()
endforeach()
