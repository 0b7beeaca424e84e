# The harness proving its own judges: named findings of negative controls, `core:` and the
# planted-core registry, per-scenario coverage, unreachable-fault warnings, the run's ceiling
# (max_run), and the shell-quoted reproduce line.
peerconf_add_test(controls_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/controls_test.cc
  LIBS peerconf::driver peerconf::planted peerconf::explore
  LABELS unit)
target_compile_definitions(controls_test PRIVATE
  PEERCONF_SCENARIOS_DIR="${CMAKE_CURRENT_LIST_DIR}/../scenarios")
