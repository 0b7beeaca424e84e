# Exploration (harness/explore/) and the negative controls: copies of the core with planted
# defects (tests/planted/) that the harness must flag, and the production core that must pass.
find_package(rapidcheck REQUIRED)

# The planted-defect copies of PeerBuffer; tests only, never in the harness or the product.
add_library(peerconf_planted STATIC
  ${CMAKE_CURRENT_LIST_DIR}/planted/crashes_on_open.cc
  ${CMAKE_CURRENT_LIST_DIR}/planted/leaks_on_failure.cc
  ${CMAKE_CURRENT_LIST_DIR}/planted/leaks_when_table_fails.cc
  ${CMAKE_CURRENT_LIST_DIR}/planted/raises_only_on_failing_rank.cc
  ${CMAKE_CURRENT_LIST_DIR}/planted/skips_agreement.cc
  ${CMAKE_CURRENT_LIST_DIR}/planted/escapes_non_error.cc
  ${CMAKE_CURRENT_LIST_DIR}/planted/wrapped_defects.cc
)
add_library(peerconf::planted ALIAS peerconf_planted)
target_include_directories(peerconf_planted PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(peerconf_planted PUBLIC peerconf::core peerconf::harness_base)

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
