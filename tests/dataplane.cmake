# Tests of the data plane: the layout and protocol (src/layout) with ranks as threads, every
# negative control caught, the C6/C7 checkers on synthetic histories, and the data plane through
# the mocked HIP runtime and a real PeerBuffer.
if(TARGET peerconf::dataplane AND TARGET peerconf::thread_group)
  peerconf_add_test(dataplane_protocol_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/dataplane_protocol_test.cc
    LIBS peerconf::checkers peerconf::thread_group
    LABELS unit)
endif()
if(TARGET peerconf::dataplane AND TARGET peerconf::thread_group)
  peerconf_add_test(dataplane_controls_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/dataplane_controls_test.cc
    LIBS peerconf::checkers peerconf::thread_group
    LABELS unit)
endif()
if(TARGET peerconf::dataplane AND TARGET peerconf::reports)
  peerconf_add_test(dataplane_checkers_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/dataplane_checkers_test.cc
    LIBS peerconf::checkers peerconf::reports peerconf::thread_group yaml-cpp
    LABELS unit)
endif()
# The GPU data plane's host side (no GPU needed): spec -> ProtocolRun, device trace -> history and
# findings, kernel outcome -> Result, `--runtime gpu` validation.
if(TARGET peerconf::dataplane AND TARGET peerconf::backends AND TARGET peerconf::mock_hip)
  peerconf_add_test(dataplane_device_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/dataplane_device_test.cc
    LIBS peerconf::dataplane peerconf::backends peerconf::mock_hip peerconf::thread_group
    LABELS unit)
endif()
if(TARGET peerconf::dataplane AND TARGET peerconf::backends AND TARGET peerconf::mock_hip)
  peerconf_add_test(dataplane_harness_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/dataplane_harness_test.cc
    LIBS peerconf::checkers peerconf::backends peerconf::mock_hip peerconf::thread_group
    LABELS unit)
  # Every rank a process (np 2, 4, 8, as the other MPI tests).
  if(COMMAND peerconf_groups_add_mpi_test)
    peerconf_groups_add_mpi_test(dataplane_mpi_test
      SOURCES dataplane_mpi_test.cc
      LIBS peerconf::checkers peerconf::backends peerconf::mock_hip peerconf::mpi_group)
  endif()
endif()
