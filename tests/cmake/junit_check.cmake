# Runs the suite with --junit and --trace, then checks the JUnit file with xmllint (well-formed
# and valid against tests/data/junit.xsd) and with a third-party consumer (python3-junitparser),
# and that the trace is an object with a traceEvents array.
#   cmake -DPEERCONF=... -DSCENARIOS=... -DXSD=... -DOUT=dir -P junit_check.cmake
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${PEERCONF} run ${SCENARIOS} --junit ${OUT}/junit.xml
                        --trace ${OUT}/trace.json --no-coverage
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "peerconf run exited ${rc}\n${out}${err}")
endif()
execute_process(COMMAND xmllint --noout ${OUT}/junit.xml RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xmllint --noout: ${err}")
endif()
execute_process(COMMAND xmllint --noout --schema ${XSD} ${OUT}/junit.xml RESULT_VARIABLE rc
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "xmllint --schema: ${err}")
endif()
execute_process(
  COMMAND /usr/bin/python3 -c
"import sys, json
from junitparser import JUnitXml, TestSuite, TestCase
xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if isinstance(xml, TestSuite) else list(xml)
cases = [c for s in suites for c in s if isinstance(c, TestCase)]
assert cases, 'no testcase'
assert all(c.name for c in cases), 'a testcase without a name'
failed = [c.name for c in cases if not c.is_passed]
assert not failed, 'failures: %s' % failed
trace = json.load(open(sys.argv[2]))
assert isinstance(trace, dict) and isinstance(trace.get('traceEvents'), list) and trace['traceEvents']
print('junitparser read %d testcases; trace has %d events' % (len(cases), len(trace['traceEvents'])))"
          ${OUT}/junit.xml ${OUT}/trace.json
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "junitparser/trace check failed: ${out}${err}")
endif()
message(STATUS "${out}")
