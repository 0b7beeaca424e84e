# Runs COMMAND (a ;-list) and checks its exit code and output.
#   cmake -DCOMMAND="a;b;c" -DEXPECT_RC=2 [-DEXPECT_REGEX=re] [-DREJECT_REGEX=re] -P expect_run.cmake
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 600)
set(all "${out}${err}")
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\n--- output ---\n${all}")
endif()
if(DEFINED EXPECT_REGEX AND NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'\n--- output ---\n${all}")
endif()
if(DEFINED REJECT_REGEX AND all MATCHES "${REJECT_REGEX}")
  message(FATAL_ERROR "output matches '${REJECT_REGEX}'\n--- output ---\n${all}")
endif()
message(STATUS "ok: exit ${rc}")
