# Tests of faults/: the fault plan and both decorators against gMock mocks of the seams, and the
# backend decorator's runtime mode over the mocked HIP runtime (when this build has it).
peerconf_add_test(faults_plan_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/faults_plan_test.cc
  LIBS peerconf::model peerconf::faults
  LABELS unit)
peerconf_add_test(faults_backend_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/faults_backend_test.cc
  LIBS peerconf::model peerconf::faults
  LABELS unit)
peerconf_add_test(faults_group_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/faults_group_test.cc
  LIBS peerconf::model peerconf::faults Threads::Threads
  LABELS unit)
if(TARGET peerconf::hip_backend_mock AND TARGET peerconf::mock_hip)
  peerconf_add_test(faults_runtime_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/faults_runtime_test.cc
    LIBS peerconf::model peerconf::faults peerconf::hip_backend_mock peerconf::mock_hip Threads::Threads
    LABELS unit)
endif()
# GPU isolation on the mock: injected close/free failures leave the real resource held until the
# harness releases it after the run; the device check (rank_settle.h) and its negative controls.
if(TARGET peerconf::hip_backend_mock AND TARGET peerconf::driver)
  peerconf_add_test(faults_leftovers_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/faults_leftovers_test.cc
    LIBS peerconf::driver peerconf::hip_backend_mock peerconf::mock_hip
    LABELS unit)
  target_compile_definitions(faults_leftovers_test PRIVATE
    PEERCONF_SCENARIOS_DIR="${CMAKE_CURRENT_LIST_DIR}/../scenarios")
endif()
