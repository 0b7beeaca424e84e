# `peerconf explain --write-expect` on copies of the faults-only drafts in tests/data/explain/:
# the draft differs (no expect), --write-expect appends the derived section and keeps the rest of
# the file byte for byte (comments included), `peerconf run` then passes it, and a second
# --write-expect leaves the file untouched (content and mtime).
#   cmake -DPEERCONF=path -DDATA=tests/data/explain -DOUT=dir -P explain_write_expect.cmake
function(run_peerconf expect_rc expect_regex)
  execute_process(COMMAND ${PEERCONF} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 120)
  if(NOT "${rc}" STREQUAL "${expect_rc}" OR NOT "${out}${err}" MATCHES "${expect_regex}")
    message(FATAL_ERROR "peerconf ${ARGN}: exit ${rc} (expected ${expect_rc}), output does "
                        "not match '${expect_regex}' or exit differs:\n${out}${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
foreach(name faults-only faults-only-hang)
  set(file ${OUT}/${name}.yaml)
  configure_file(${DATA}/${name}.yaml ${file} COPYONLY)
  file(READ ${file} before)
  run_peerconf(1 "has no expect: section" explain ${file})
  run_peerconf(0 "1 agree, 0 differ, 0 not derived, 0 invalid, 1 written"
               explain --write-expect ${file})
  file(READ ${file} after)
  string(FIND "${after}" "${before}" kept)
  if(NOT kept EQUAL 0 OR NOT after MATCHES "\nexpect:\n  outcome: ")
    message(FATAL_ERROR "${file}: the draft is not kept as it was, with expect: appended:\n"
                        "${after}")
  endif()
  run_peerconf(0 "1 passed, 0 failed" run ${file})
  # A second --write-expect finds nothing to change: the file keeps its (old) mtime.
  execute_process(COMMAND touch -d 2000-01-01T00:00:00 ${file} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "touch -d failed")
  endif()
  run_peerconf(0 "1 agree, 0 differ, 0 not derived, 0 invalid, 0 written"
               explain --write-expect ${file})
  file(TIMESTAMP ${file} year "%Y")
  file(READ ${file} again)
  if(NOT year STREQUAL "2000" OR NOT again STREQUAL after)
    message(FATAL_ERROR "${file}: rewritten by a second --write-expect (mtime year ${year})")
  endif()
endforeach()
message(STATUS "ok")
