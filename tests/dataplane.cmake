# Tests of the data plane: the layout and protocol (src/layout) with ranks as threads, every
# negative control caught, the C6/C7 checkers on synthetic histories, and the data plane through
# the mocked HIP runtime and a real PeerBuffer.
if(TARGET peerconf::dataplane AND TARGET peerconf::thread_group)
  peerconf_add_test(dataplane_protocol_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/dataplane_protocol_test.cc
    LIBS peerconf::dataplane peerconf::thread_group
    LABELS unit)
endif()
if(TARGET peerconf::dataplane AND TARGET peerconf::thread_group)
  peerconf_add_test(dataplane_controls_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/dataplane_controls_test.cc
    LIBS peerconf::dataplane peerconf::thread_group
    LABELS unit)
endif()
if(TARGET peerconf::dataplane AND TARGET peerconf::reports)
  peerconf_add_test(dataplane_checkers_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/dataplane_checkers_test.cc
    LIBS peerconf::dataplane peerconf::reports peerconf::thread_group yaml-cpp
    LABELS unit)
endif()
