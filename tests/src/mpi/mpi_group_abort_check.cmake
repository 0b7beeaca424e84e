# Runs mpi_group_abort_main under mpiexec and checks that the missed deadline aborted the job
# with code 3 and said which rank, operation and deadline. Invoked as
#   cmake -DMPIEXEC_COMMAND=<;-list> -P mpi_group_abort_check.cmake
execute_process(COMMAND ${MPIEXEC_COMMAND}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
set(all "${out}${err}")
message("${all}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the job exited 0: the missed deadline did not abort it")
endif()
if(NOT rc STREQUAL "3")
  message(FATAL_ERROR "the job exited with '${rc}', expected MPI_Abort's code 3")
endif()
if(NOT all MATCHES "MpiGroup rank [0-9]+ of [0-9]+: all-reduce \\(MPI_Iallreduce\\) did not complete within its deadline of 300 ms")
  message(FATAL_ERROR "no rank/operation/deadline message on stderr")
endif()
if(all MATCHES "the job was not aborted")
  message(FATAL_ERROR "a rank ran past the abort")
endif()
