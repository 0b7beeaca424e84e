# Scenario parsing and validation: unit tests over the value formats and rules, every broken
# example in data/invalid_scenarios/ (each names the line, column and message it must fail with),
# and the whole checked-in suite in scenarios/, read at run time.
find_package(nlohmann_json REQUIRED)
peerconf_add_test(scenario_test
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/scenario_test.cc
  LIBS peerconf::scenario nlohmann_json::nlohmann_json
  LABELS unit)
target_compile_definitions(scenario_test PRIVATE
  PEERCONF_SCENARIOS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/../scenarios"
  PEERCONF_INVALID_SCENARIOS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data/invalid_scenarios")

# The editor schema must accept every scenario of the suite (skipped without PyYAML/jsonschema).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME scenario_schema_check
           COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/scenario_schema_check.py
                   ${CMAKE_CURRENT_SOURCE_DIR}/../scenarios)
  set_tests_properties(scenario_schema_check PROPERTIES LABELS unit SKIP_RETURN_CODE 77
                       TIMEOUT 60)
endif()

# The fault-site trait table (harness/model/fault_sites.h) against the vocabulary, the parser, the
# writer and the editor schema.
peerconf_add_test(model_fault_sites_test
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/model_fault_sites_test.cc
  LIBS peerconf::scenario nlohmann_json::nlohmann_json
  LABELS unit)
target_compile_definitions(model_fault_sites_test PRIVATE
  PEERCONF_SCENARIOS_DIR="${CMAKE_CURRENT_SOURCE_DIR}/../scenarios")
