# Hardening (issue 8): the target the sanitizer presets build, the libFuzzer targets, the install
# consumer test and the crash/hang sweep. Owned by hardening; see ci/sanitizers.sh, ci/fuzz.sh,
# ci/sweep.py.

# The mocked runtime's handle and segment security: fuzzing findings and cross-process refusals
# that tests/mock_hip_test.cc does not cover.
if(TARGET peerconf::mock_hip)
  peerconf_add_test(mock_hip_hardening_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/mock_hip_hardening_test.cc
    LIBS peerconf::mock_hip
    LABELS unit)
endif()
