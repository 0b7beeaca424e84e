# Scenario parsing and validation (the first stage of the data flow): the public API in
# scenario.cc, the YAML walk, the cross-key rules, and the value formats they share.
set(PEERCONF_SCENARIO_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/scenario.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/scenario_parser.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/scenario_rules.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/scenario_values.cc
)
