# Exploration (harness/explore/) and the negative controls: copies of the core with planted
# defects (tests/planted/) that the harness must flag, and the production core that must pass.
find_package(rapidcheck REQUIRED)

# The planted-defect copies of PeerBuffer (peerconf::planted) are defined in tests/planted/,
# which the top level adds with or without BUILD_TESTING (`core:` in scenario files).

# The writer, the derivation of expectations and the determinism comparison, on fixed inputs.
peerconf_add_test(explore_unit_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/explore_determinism_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/explore_expectation_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/explore_writer_test.cc
  LIBS peerconf::explore
  LABELS unit)
target_compile_definitions(explore_unit_test PRIVATE
  PEERCONF_SCENARIOS_DIR="${CMAKE_CURRENT_LIST_DIR}/../scenarios")

# Properties over generated scenarios (rapidcheck; RC_PARAMS="max_success=N seed=S" to widen),
# and the end-to-end search for each planted defect down to its minimal scenario file.
peerconf_add_test(explore_property_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/explore_planted_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/explore_property_test.cc
  LIBS peerconf::explore peerconf::planted rapidcheck_gtest
  LABELS property)

# Every subset of open failures of 4 ranks (4096 cases), and smaller ones against the planted
# cores.
peerconf_add_test(explore_exhaustive_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/explore_exhaustive_test.cc
  LIBS peerconf::explore peerconf::planted
  LABELS exhaustive)

# Negative controls: the suite's own scenario files against each planted defect, and the
# production core against the same files (the control of the control).
peerconf_add_test(negative_controls_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/negative_controls_test.cc
  LIBS peerconf::explore peerconf::planted
  LABELS scenario)
target_compile_definitions(negative_controls_test PRIVATE
  PEERCONF_SCENARIOS_DIR="${CMAKE_CURRENT_LIST_DIR}/../scenarios")

# `peerconf explain`: the derived timelines and expectations of scenarios of every kind, the
# comparison with each file's `expect:`, and --write-expect (tests/data/explain/).
peerconf_add_test(explore_explain_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/explore_explain_test.cc
  LIBS peerconf::explore
  LABELS unit)
target_compile_definitions(explore_explain_test PRIVATE
  PEERCONF_SCENARIOS_DIR="${CMAKE_CURRENT_LIST_DIR}/../scenarios"
  PEERCONF_EXPLAIN_DATA_DIR="${CMAKE_CURRENT_LIST_DIR}/data/explain")
