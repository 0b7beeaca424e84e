# Tests of faults/: the fault plan and both decorators against gMock mocks of the seams, and the
# backend decorator's runtime mode over the mocked HIP runtime (when this build has it).
peerconf_add_test(faults_plan_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/faults_plan_test.cc
  LIBS peerconf::faults
  LABELS unit)
peerconf_add_test(faults_backend_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/faults_backend_test.cc
  LIBS peerconf::faults
  LABELS unit)
