# Installs this build into a staged prefix, then configures, builds and runs tests/install/consumer
# against it with find_package(peerconf). Invoked by ctest (install/consumer) as
#   cmake -DBUILD_DIR=... -DSTAGE=... -DCONSUMER_SOURCE=... -DCONSUMER_BUILD=... -DGENERATOR=...
#         -DCXX_COMPILER=... -DCXX_FLAGS=... -DLINKER_FLAGS=... -DBUILD_TYPE=... -P install_check.cmake
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${STAGE} ${CONSUMER_BUILD})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${STAGE})
foreach(file lib/cmake/peerconf/peerconfConfig.cmake lib/cmake/peerconf/peerconfConfigVersion.cmake
             lib/cmake/peerconf/peerconfTargets.cmake include/peerconf/peer_buffer.h
             include/peerconf/mock_hip/control.h bin/peerconf)
  if(NOT EXISTS ${STAGE}/${file})
    message(FATAL_ERROR "the staged install lacks ${file}")
  endif()
endforeach()
file(READ ${STAGE}/lib/cmake/peerconf/peerconfTargets.cmake targets)
foreach(target core mock_hip hip_backend_mock backends thread_group mpi_group faults model scenario
               launch mpirun checkers judge reports explore driver)
  if(NOT targets MATCHES "add_library\\(peerconf::${target} ")
    message(FATAL_ERROR "peerconfTargets.cmake does not export peerconf::${target}")
  endif()
endforeach()

# The consumer is built the way this build was (compiler, sanitizer flags), else it cannot link.
run("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${CONSUMER_BUILD}
    -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${STAGE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
run("building the consumer" ${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
run("running the consumer" ${CONSUMER_BUILD}/consumer)
message("${last_output}")
if(NOT last_output MATCHES "handshake ok")
  message(FATAL_ERROR "the consumer did not report a handshake")
endif()
