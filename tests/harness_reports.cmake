# Unit tests of the checkers (one file per property) and the reports, on synthetic run records.
find_package(nlohmann_json REQUIRED)
# xmllint validates the JUnit report in a test; without it that test skips and says so.
find_program(PEERCONF_XMLLINT xmllint)
if(NOT PEERCONF_XMLLINT)
  set(PEERCONF_XMLLINT "")
endif()

peerconf_add_test(checkers_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/checkers_addresses_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkers_agreement_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkers_bounded_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkers_cleanup_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkers_messages_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkers_registry_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/checkers_uniform_outcome_test.cc
  LIBS peerconf::checkers peerconf::checkers_testing
  LABELS unit)

peerconf_add_test(reports_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/reports_console_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/reports_html_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/reports_junit_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/reports_record_json_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/reports_trace_test.cc
  LIBS peerconf::reports peerconf::checkers peerconf::checkers_testing
  LABELS unit)
target_compile_definitions(reports_test PRIVATE
  PEERCONF_XMLLINT="${PEERCONF_XMLLINT}"
  PEERCONF_TEST_DATA_DIR="${CMAKE_CURRENT_LIST_DIR}/data")

# The HTML report in a real headless browser (Debian's chromium): a `peerconf run --html` over a
# few scenarios with a planted core (some fail); the DOM holds every scenario and its verdict, a
# screenshot of the failing ones expanded is not blank. Label `browser` (not run by the sanitizer
# presets). Skipped without chromium, unless PEERCONF_REQUIRE_BROWSER=1 (ci/test.sh): then fails.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME reports.html-browser
           COMMAND Python3::Interpreter ${CMAKE_CURRENT_LIST_DIR}/reports_html_browser.py
                   $<TARGET_FILE:peerconf> ${PROJECT_SOURCE_DIR}/scenarios
                   ${CMAKE_CURRENT_BINARY_DIR}/html-browser)
  set_tests_properties(reports.html-browser PROPERTIES LABELS browser SKIP_RETURN_CODE 77
                       TIMEOUT 300)
endif()
