# Tests of harness/launch/: the MPI session's round packing (packRounds), the supervisor's parts
# that need no mpirun (its run-directory files, the result of a rank that wrote none, process
# watching), the recording decorators over gMock seams, and the launchers' decorator stack
# (rank_launch.h) through the seam conformance suites with an empty fault plan. The launchers
# themselves run in the isolation, explore, controls and MPI tests and in the suite.
set(peerconf_launch_unit_sources launch_recording_test.cc launch_rounds_test.cc
                                 launch_supervisor_test.cc)
list(TRANSFORM peerconf_launch_unit_sources PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
peerconf_add_test(launch_test SOURCES ${peerconf_launch_unit_sources} LIBS peerconf::launch
                  LABELS unit)

# The conformance suites are written once in tests/; this binary instantiates them for the
# decorated seams only.
set(peerconf_launch_conformance_sources launch_seam_conformance_test.cc ipc_backend_conformance.cc
                                        ipc_backend_ranks.cc group_conformance.cc)
list(TRANSFORM peerconf_launch_conformance_sources PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
peerconf_add_test(launch_seam_conformance_test SOURCES ${peerconf_launch_conformance_sources}
                  LIBS peerconf::launch peerconf::hip_backend_mock peerconf::mock_hip
                       peerconf::thread_group LABELS unit)

foreach(target launch_test launch_seam_conformance_test)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_LIST_DIR})
endforeach()
