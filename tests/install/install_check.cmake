# Installs this build into a staged prefix, checks that its include tree is exactly the public
# headers, then configures, builds and runs tests/install/consumer against it with
# find_package(peerconf). Invoked by ctest (tests/install/CMakeLists.txt) as
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DPUBLIC_HEADERS=... -DSTAGE=... -DCONSUMER_SOURCE=...
#         -DCONSUMER_BUILD=... -DGENERATOR=... -DCXX_COMPILER=... -DCXX_FLAGS=... -DLINKER_FLAGS=...
#         -DBUILD_TYPE=... [-DPLANT=internal-header|internal-include] -P install_check.cmake
# PUBLIC_HEADERS: the file peerconf_install.cmake writes (PEERCONF_PUBLIC_HEADERS as installed).
# PLANT (the negative controls): after installing, plant a defect in the staged tree that this
# check must name: internal-header adds an internal header (mock_hip/runtime_state.h) and removes a
# public one (errors.h); internal-include makes the public peer_buffer.h include the internal
# exchange_entry.h, and only the public headers are built.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${STAGE} ${CONSUMER_BUILD})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${STAGE})
foreach(file share/peerconf/schema.json share/peerconf/README.md
             lib/cmake/peerconf/peerconfConfig.cmake lib/cmake/peerconf/peerconfConfigVersion.cmake
             lib/cmake/peerconf/peerconfTargets.cmake bin/peerconf)
  if(NOT EXISTS ${STAGE}/${file})
    message(FATAL_ERROR "the staged install lacks ${file}")
  endif()
endforeach()
file(READ ${STAGE}/lib/cmake/peerconf/peerconfTargets.cmake targets)
foreach(target core mock_hip hip_backend_mock backends thread_group mpi_group faults model scenario
               launch mpirun checkers judge reports explore driver command_line layout)
  if(NOT targets MATCHES "add_library\\(peerconf::${target} ")
    message(FATAL_ERROR "peerconfTargets.cmake does not export peerconf::${target}")
  endif()
endforeach()
# The exported targets point into the install tree only: a source folder on a consumer's include
# path would hide an uninstalled header from the public_headers check below.
file(GLOB target_files ${STAGE}/lib/cmake/peerconf/peerconfTargets*.cmake)
foreach(target_file IN LISTS target_files)
  file(READ ${target_file} text)
  string(FIND "${text}" "${SOURCE_DIR}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${target_file} names the source tree ${SOURCE_DIR}")
  endif()
endforeach()

set(include_root ${STAGE}/include/peerconf)
if(PLANT STREQUAL "internal-header")
  file(COPY ${SOURCE_DIR}/src/mock_hip/runtime_state.h DESTINATION ${include_root}/mock_hip)
  file(REMOVE ${include_root}/errors.h)
elseif(PLANT STREQUAL "internal-include")
  file(APPEND ${include_root}/peer_buffer.h "#include \"exchange_entry.h\"\n")
elseif(DEFINED PLANT)
  message(FATAL_ERROR "PLANT=${PLANT}: internal-header or internal-include")
endif()

# The include tree is the public list, file for file: an extra file is an internal header leaking
# out (or a public one missing from the list), a missing one an install rule that lost it.
file(STRINGS ${PUBLIC_HEADERS} public)
file(GLOB_RECURSE installed LIST_DIRECTORIES false RELATIVE ${include_root} ${include_root}/*)
set(extra ${installed})
list(REMOVE_ITEM extra ${public})
set(missing ${public})
list(REMOVE_ITEM missing ${installed})
if(extra OR missing)
  list(SORT extra)
  list(SORT missing)
  list(JOIN extra " " extra)
  list(JOIN missing " " missing)
  message(FATAL_ERROR "include/peerconf/ is not the public headers (PEERCONF_PUBLIC_HEADERS, "
                      "src/cmake/peerconf_install.cmake): not public: [${extra}] missing: "
                      "[${missing}]")
endif()
list(LENGTH public count)
message("include/peerconf/: the ${count} public headers, no other file")

# The consumer is built the way this build was (compiler, sanitizer flags), else it cannot link.
set(only_headers)
if(PLANT STREQUAL "internal-include")
  # The planted header alone: that it fails is the control; the others are install/consumer's.
  set(only_headers -DPEERCONF_CHECK_HEADERS=peer_buffer.h)
endif()
run("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${CONSUMER_BUILD}
    -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${STAGE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} ${only_headers})
# Each public header alone against the install tree (consumer/CMakeLists.txt, public_headers).
run("compiling every installed header alone" ${CMAKE_COMMAND} --build ${CONSUMER_BUILD}
    --target public_headers)
message("every installed header compiles alone against the install tree")
if(PLANT STREQUAL "internal-include")
  message(FATAL_ERROR "the planted include was not caught")
endif()
run("building the consumer" ${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
run("running the consumer" ${CONSUMER_BUILD}/consumer)
message("${last_output}")
if(NOT last_output MATCHES "handshake ok")
  message(FATAL_ERROR "the consumer did not report a handshake")
endif()
run("running the harness consumer" ${CONSUMER_BUILD}/harness_consumer
    ${SOURCE_DIR}/scenarios/alloc/alloc-fails-two-ranks.yaml
    ${SOURCE_DIR}/scenarios/controls/c3-closes-in-destructor.yaml)
message("${last_output}")
if(NOT last_output MATCHES "harness ok")
  message(FATAL_ERROR "the harness consumer did not report its verdicts")
endif()

# A team's own layout, built against the staged install as its own project would be
# (ci/examples/protocol-layout): its scenario files on simulated time (weak memory: the planted
# ordering bug must fail C7), on real time (where that control is skipped, saying so), and under
# one mpirun. Each run's exit status is the suite's verdict: 0 only if every file passed, the
# controls failing as their files expect.
if(DEFINED EXAMPLE_SOURCE)
  set(example_build ${CONSUMER_BUILD}-example)
  file(REMOVE_RECURSE ${example_build})
  # Its GPU part (counter_flags.cu, when the package is a CUDA build) is left out here: CUDA's
  # configure and nvcc cost this serial test about 25 CPU-s of CI's 20 minutes; the nightly builds
  # it against the installed CUDA build (ci/nightly-build.sh) and runs it on the GPUs.
  run("configuring the protocol example" ${CMAKE_COMMAND} -S ${EXAMPLE_SOURCE} -B ${example_build}
      -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${STAGE} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
      "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
      -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DMYTEAM_WITH_GPU=OFF)
  run("building the protocol example" ${CMAKE_COMMAND} --build ${example_build})
  set(example ${example_build}/myteam-peerconf)
  set(scenarios ${EXAMPLE_SOURCE}/scenarios)
  run("the protocol example on simulated time" ${example} run ${scenarios})
  message("${last_output}")
  if(NOT last_output MATCHES "PASS control-relaxed-flag [^\n]*.C7 failed as expected.")
    message(FATAL_ERROR "the planted ordering bug was not caught by C7 on simulated time")
  endif()
  run("the protocol example on real time" ${example} run --clock real ${scenarios})
  message("${last_output}")
  if(NOT last_output MATCHES "SKIP control-relaxed-flag: written for --clock sim")
    message(FATAL_ERROR "the sim-only control was not skipped on real time")
  endif()
  run("the protocol example under mpirun" ${example} run --launcher mpi ${scenarios})
  message("${last_output}")
  # What the team's layouts refuse (supports(): counter-flags runs no two collectives in flight),
  # refused by validate at the key with the reason each file names.
  run("the protocol example's refusals" ${example} validate --refused ${EXAMPLE_SOURCE}/refused)
  message("${last_output}")
endif()
