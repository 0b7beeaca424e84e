# The CI examples (ci/examples/): the GitHub Actions workflow through the third-party validator
# (npm @action-validator/cli, installed by ci/install-deps.sh into build/tools) and the GitLab job
# parsed (PyYAML), each against what ci/nightly-gpu runs and writes, with negative controls (broken
# copies that must be caught). Skipped (77) when the validator or PyYAML is missing, unless
# PEERCONF_REQUIRE_CI_EXAMPLES=1 (ci/test.sh sets it): then a missing tool fails.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  foreach(kind github gitlab)
    add_test(NAME ci_examples_${kind}
             COMMAND Python3::Interpreter ${CMAKE_CURRENT_SOURCE_DIR}/ci_examples_test.py ${kind}
                     ${PROJECT_SOURCE_DIR})
    set_tests_properties(ci_examples_${kind} PROPERTIES LABELS unit SKIP_RETURN_CODE 77
                         TIMEOUT 120)
  endforeach()
endif()
