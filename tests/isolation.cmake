# Process isolation (harness/launch/isolation.h) and the validator's resource bounds: a crashing core
# fails its scenario while the suite goes on, and a huge key or value is refused quickly and
# cheaply. Both drive the real harness (runSuite, the peerconf binary).
find_package(nlohmann_json REQUIRED)
find_program(PEERCONF_XMLLINT xmllint)
if(NOT PEERCONF_XMLLINT)
  set(PEERCONF_XMLLINT "")
endif()

peerconf_add_test(isolation_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/isolation_test.cc
  LIBS peerconf::driver peerconf::explore peerconf::planted nlohmann_json::nlohmann_json
  LABELS unit)
target_compile_definitions(isolation_test PRIVATE
  PEERCONF_XMLLINT="${PEERCONF_XMLLINT}"
  PEERCONF_TEST_DATA_DIR="${CMAKE_CURRENT_LIST_DIR}/data")

# `peerconf validate` on a 20 MB key or value, as a child under RLIMIT_CPU and RLIMIT_AS.
peerconf_add_test(validate_limits_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/validate_limits_test.cc
  LIBS peerconf::scenario
  LABELS unit)
target_compile_definitions(validate_limits_test PRIVATE PEERCONF_BINARY="$<TARGET_FILE:peerconf>")
add_dependencies(validate_limits_test peerconf)
