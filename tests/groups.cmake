# Tests of the group implementations: the Group conformance suite (written once in
# group_conformance.cc) for ThreadGroup and MpiGroup, runRanks, and the PeerBuffer handshake over
# real groups with the mocked HIP runtime. Test names start with their binary's name so that
# `ctest -R 'group|thread|mpi'` selects them.

# Sources are named from this file's folder so the list also works when included elsewhere.
set(peerconf_groups_dir ${CMAKE_CURRENT_LIST_DIR})

# peerconf_groups_add_test(NAME SOURCES... LIBS... LABELS...): a gtest binary whose discovered
# tests are named "<NAME>.<Suite>.<Test>".
function(peerconf_groups_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  list(TRANSFORM ARG_SOURCES PREPEND ${peerconf_groups_dir}/)
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${peerconf_groups_dir})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name} TEST_PREFIX "${name}." PROPERTIES LABELS "${ARG_LABELS}"
                       TIMEOUT 120 DISCOVERY_TIMEOUT 60)
endfunction()

peerconf_groups_add_test(thread_group_conformance_test
  SOURCES thread_group_conformance_test.cc group_conformance.cc
  LIBS peerconf::thread_group
  LABELS unit)

peerconf_groups_add_test(thread_group_test
  SOURCES thread_group_test.cc
  LIBS peerconf::thread_group
  LABELS unit)

set(peerconf_groups_have_mock_hip FALSE)
if(TARGET peerconf::mock_hip AND TARGET peerconf::hip_backend_mock)
  set(peerconf_groups_have_mock_hip TRUE)
else()
  message(STATUS "peerconf groups: mocked HIP runtime not built yet; handshake tests skipped")
endif()

if(peerconf_groups_have_mock_hip)
  peerconf_groups_add_test(thread_handshake_test
    SOURCES thread_handshake_test.cc group_handshake_checks.cc
    LIBS peerconf::thread_group peerconf::hip_backend_mock peerconf::mock_hip
    LABELS unit)
endif()

# Every MPI test runs as one job at each of these sizes (more ranks than cores: oversubscribed).
set(PEERCONF_MPI_TEST_RANKS 2 4 8 CACHE STRING "Job sizes the MPI tests run at")
set(peerconf_mpiexec_flags ${MPIEXEC_PREFLAGS} --allow-run-as-root --oversubscribe)

# peerconf_groups_add_mpi_test(NAME SOURCES... LIBS... [TIMEOUT s]): a gtest binary with
# mpi_test_main.cc, registered as NAME_np<N> for each job size, label mpi.
function(peerconf_groups_add_mpi_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 180)
  endif()
  # Open MPI's own --timeout ends a hung job (and says so) before ctest kills mpiexec.
  math(EXPR mpi_timeout "${ARG_TIMEOUT} - 10")
  list(TRANSFORM ARG_SOURCES PREPEND ${peerconf_groups_dir}/)
  add_executable(${name} ${ARG_SOURCES} ${peerconf_groups_dir}/mpi_test_main.cc)
  target_include_directories(${name} PRIVATE ${peerconf_groups_dir})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} MPI::MPI_CXX GTest::gmock GTest::gtest)
  foreach(np IN LISTS PEERCONF_MPI_TEST_RANKS)
    add_test(NAME ${name}_np${np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                     ${peerconf_mpiexec_flags} --timeout ${mpi_timeout}
                     $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}_np${np} PROPERTIES LABELS mpi TIMEOUT ${ARG_TIMEOUT}
                         PROCESSORS 2)
  endforeach()
endfunction()

peerconf_groups_add_mpi_test(mpi_group_conformance_test
  SOURCES mpi_group_conformance_test.cc group_conformance.cc
  LIBS peerconf::mpi_group)

# OnTimeout::kAbort: a missed deadline must end the job with MPI_Abort's code 3.
add_executable(mpi_group_abort_main ${peerconf_groups_dir}/mpi_group_abort_main.cc)
target_link_libraries(mpi_group_abort_main PRIVATE peerconf::mpi_group MPI::MPI_CXX)
set(abort_command ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${peerconf_mpiexec_flags}
                  $<TARGET_FILE:mpi_group_abort_main> ${MPIEXEC_POSTFLAGS})
add_test(NAME mpi_group_abort_on_timeout_np4
         COMMAND ${CMAKE_COMMAND} "-DMPIEXEC_COMMAND=${abort_command}"
                 -P ${peerconf_groups_dir}/mpi_group_abort_check.cmake)
set_tests_properties(mpi_group_abort_on_timeout_np4 PROPERTIES LABELS mpi TIMEOUT 90
                     PROCESSORS 2)

# The MPI launcher frees the communicators of every scenario whose group is still usable:
# thousands of raising scenarios in one mpirun keep the count of live communicators flat, and
# a timed-out group's are kept (the control).
add_executable(mpi_launcher_comms_main ${peerconf_groups_dir}/mpi_launcher_comms_main.cc)
target_link_libraries(mpi_launcher_comms_main PRIVATE peerconf::driver MPI::MPI_CXX)
add_test(NAME mpi_launcher_frees_communicators_np2
         COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${peerconf_mpiexec_flags}
                 --timeout 230 $<TARGET_FILE:mpi_launcher_comms_main> ${MPIEXEC_POSTFLAGS})
set_tests_properties(mpi_launcher_frees_communicators_np2 PROPERTIES LABELS mpi TIMEOUT 240
                     PROCESSORS 2)

if(peerconf_groups_have_mock_hip)
  peerconf_groups_add_mpi_test(mpi_handshake_test
    SOURCES mpi_handshake_test.cc group_handshake_checks.cc
    LIBS peerconf::mpi_group peerconf::hip_backend_mock peerconf::mock_hip)
endif()
