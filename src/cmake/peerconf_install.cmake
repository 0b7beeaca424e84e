# `cmake --install`: the libraries of src/, faults/ and harness/ as peerconf:: targets (the list
# in peerconf_install()), the public headers (PEERCONF_PUBLIC_HEADERS) under include/peerconf/, the
# `peerconf` command, a package config (find_package(peerconf)), and the scenario language's
# schema.json and guide (README.md) under share/peerconf/. Each target keeps the name its
# alias has in the build (peerconf_mock_hip -> peerconf::mock_hip). Every library is installed
# (they are static: a consumer links their closure), but only the public headers are.
include(CMakePackageConfigHelpers)

set(PEERCONF_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/peerconf)
set(PEERCONF_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/peerconf)

# The protocol API: what a layout is written against (scenarios/README.md, "Your own layout"):
# the memory operations with orders and scopes, a rank's base with the wait and abort rules, what a
# layout records, the workloads, the host engine, registry and registration. The built-in layouts
# (src/layout/layout.h, protocol.h, reference.h) use these and nothing else of peerconf's but the
# core's public headers: ci/layering.py checks it (the `protocol` layer of ci/layers.txt).
set(PEERCONF_PROTOCOL_API_HEADERS
    src/layout/hd.h src/layout/tag.h src/layout/mem_ops.h src/layout/wait.h src/layout/observer.h
    src/layout/payload.h src/layout/rank_base.h src/layout/workloads.h src/layout/engine.h
    src/layout/register.h src/layout/clocked_mem_ops.h src/layout/host_mem_ops.h)

# The protocol API's GPU side, in a build with the CUDA kernels (peerconf::gpu_kernels_cuda): the
# data-plane kernel template a team's .cu compiles its layout into (layout_kernel.h's
# registerLayoutKernels) and what it includes. PEERCONF_DEVICE_HEADERS of them need the GPU
# compiler: install/consumer does not compile them alone (the package says which, as
# peerconf_DEVICE_HEADERS); the worked example's .cu compiles them.
set(PEERCONF_GPU_API_HEADERS
    src/gpu_kernels/layout_kernel.h src/gpu_kernels/gpu_api.h src/hip/hip_to_cuda.h
    src/gpu_kernels/protocol_kernels.h src/gpu_kernels/trace.h)
set(PEERCONF_DEVICE_HEADERS gpu_kernels/layout_kernel.h gpu_kernels/gpu_api.h hip/hip_to_cuda.h)

# The public headers: what a program outside this repository includes, and every header they
# include (an installed header never includes an uninstalled one). The one list of them: the
# install rules below and the install/ tests (tests/install/) read it. Paths from the repository
# root; each installs under include/peerconf/ at its path less a leading "src/", so users include
# them as the build does: "peer_buffer.h", "mock_hip/control.h", "faults/fault_plan.h", and the
# harness's as "model/verdict.h" (from include/peerconf/harness/). Everything else is internal.
set(PEERCONF_PUBLIC_HEADERS
    # The core: the seams, PeerBuffer, tpAgree, errors, the backend choice.
    src/ipc_backend.h src/group.h src/peer_buffer.h src/tp_agree.h src/errors.h
    src/backend_factory.h
    # The Group implementations: ranks as MPI processes, or as threads (run_ranks.h runs them).
    src/mpi/mpi_group.h src/thread/thread_group.h src/thread/run_ranks.h src/thread/thread_world.h
    src/clock.h src/sim_memory.h
    # The mocked HIP runtime's control API (ledger, leak queries, fault hooks) and the types it
    # names (hipError_t, hipIpcMemHandle_t: peerconf::mock_hip's own, no clash with HIP's).
    src/mock_hip/control.h src/mock_hip/hip_runtime_api.h
    # The harness as a library: scenario files run against a core, verdicts read. The suite
    # whole (runSuite: files -> reports, exit code; SuiteOptions::core/cores plug a core in), or
    # one scenario at a time: loadScenario -> runThreads (thread_launcher.h; LaunchOptions::core)
    # -> judgeRun (judgement.h: the checkers' verdicts, the oracle's word on the file, the rules;
    # checkers.h for a checker subset of one's own, judged by judge()). With the model they speak
    # (a scenario, a run's record, a verdict, a core under test).
    harness/driver/suite.h harness/launch/launcher.h harness/launch/thread_launcher.h
    harness/launch/core_registry.h
    harness/scenario/load.h harness/checkers/checkers.h harness/judge/judgement.h
    harness/model/core_under_test.h harness/model/scenario.h harness/model/run_record.h
    harness/model/verdict.h harness/model/event_log.h harness/model/dataplane_spec.h
    harness/model/dataplane_result.h harness/model/step_cap.h
    # What those include: checkers.h's per-property checkers, a scenario's fault plan.
    harness/checkers/addresses.h harness/checkers/agreement.h harness/checkers/bounded.h
    harness/checkers/cleanup.h harness/checkers/messages.h harness/checkers/uniform_outcome.h
    faults/fault_plan.h faults/fault_spec.h faults/rank_control.h src/name_table.h
    # The data-plane spec's layout (makeLayout returns it): the reference family's buffer map.
    src/layout/layout.h
    # The protocol API (PEERCONF_PROTOCOL_API_HEADERS below): what a team's layout is written
    # against and registered with, and peerconf's command line for its own executable.
    ${PEERCONF_PROTOCOL_API_HEADERS} harness/driver/command_line.h)
if(PEERCONF_WITH_CUDA)
  list(APPEND PEERCONF_PUBLIC_HEADERS ${PEERCONF_GPU_API_HEADERS})
else()
  set(PEERCONF_DEVICE_HEADERS)
endif()
# The same, as installed under include/peerconf/, one a line: what tests/install/ compares the
# installed include tree with.
set(PEERCONF_PUBLIC_HEADERS_FILE ${PROJECT_BINARY_DIR}/peerconf_public_headers.txt)

# Imported targets the exported ones link, as the packages find_dependency must find.
function(peerconf_package_dependencies targets out)
  set(packages)
  foreach(target IN LISTS targets)
    foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(libs ${target} ${property})
      foreach(lib IN LISTS libs)
        # Static libraries carry their private dependencies as $<LINK_ONLY:...>.
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
        if(lib MATCHES "^Threads::")
          list(APPEND packages Threads)
        elseif(lib MATCHES "^MPI::")
          list(APPEND packages MPI)
        elseif(lib MATCHES "^yaml-cpp")
          list(APPEND packages yaml-cpp)
        elseif(lib MATCHES "^nlohmann_json::")
          list(APPEND packages nlohmann_json)
        elseif(lib MATCHES "^CLI11::")
          list(APPEND packages CLI11)
        elseif(lib MATCHES "^hip::")
          list(APPEND packages hip)
        elseif(lib MATCHES "^CUDA::")
          list(APPEND packages CUDAToolkit)
        elseif(lib MATCHES "^Boost::")
          list(APPEND packages Boost)
        elseif(lib MATCHES "^rapidcheck")
          list(APPEND packages rapidcheck)
        elseif(lib MATCHES "::" AND NOT lib MATCHES "^(peerconf::|\\$<)")
          message(WARNING "peerconf install: ${target} links ${lib}; add its package to "
                          "src/cmake/peerconf_install.cmake so find_package(peerconf) finds it")
        endif()
      endforeach()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES packages)
  set(${out} ${packages} PARENT_SCOPE)
endfunction()

function(peerconf_install)
  # Every library of src/, faults/ and harness/, by layer (the planted cores and test helpers are
  # never installed). The GPU variants are there when this build has them.
  set(libraries
    peerconf_core peerconf_mock_hip peerconf_hip_backend_mock peerconf_backends peerconf_layout
    peerconf_clock peerconf_thread_group peerconf_mpi_group
    peerconf_faults
    peerconf_model peerconf_scenario peerconf_expectation peerconf_dataplane peerconf_launch
    peerconf_mpirun
    peerconf_checkers peerconf_judge peerconf_reports peerconf_explore peerconf_driver
    peerconf_command_line)
  if(PEERCONF_WITH_CUDA)
    list(APPEND libraries peerconf_hip_backend_cuda peerconf_gpu_kernels_cuda)
  endif()
  if(PEERCONF_WITH_HIP)
    list(APPEND libraries peerconf_hip_backend_rocm)
  endif()

  # Headers are included as the build includes them: "peer_buffer.h", "mock_hip/control.h",
  # "faults/fault_plan.h"; the harness's own as "<layer>/<file>.h" from include/peerconf/harness.
  set(harness_include ${PEERCONF_INSTALL_INCLUDEDIR}/harness)
  foreach(target IN LISTS libraries)
    string(REGEX REPLACE "^peerconf_" "" name ${target})
    set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
    get_target_property(source_dir ${target} SOURCE_DIR)
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${source_dir})
    if(rel MATCHES "^harness")
      set_property(TARGET ${target} APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                   $<INSTALL_INTERFACE:${harness_include}>
                   $<INSTALL_INTERFACE:${PEERCONF_INSTALL_INCLUDEDIR}>)
    elseif(rel MATCHES "^faults")
      set_property(TARGET ${target} APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                   $<INSTALL_INTERFACE:${PEERCONF_INSTALL_INCLUDEDIR}>)
    endif()
  endforeach()

  install(TARGETS ${libraries} EXPORT peerconfTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
          INCLUDES DESTINATION ${PEERCONF_INSTALL_INCLUDEDIR})
  set(installed)
  foreach(header IN LISTS PEERCONF_PUBLIC_HEADERS)
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${header})
      message(FATAL_ERROR "PEERCONF_PUBLIC_HEADERS (src/cmake/peerconf_install.cmake) names "
                          "${header}, which does not exist")
    endif()
    string(REGEX REPLACE "^src/" "" path ${header})
    get_filename_component(dir ${path} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${PEERCONF_INSTALL_INCLUDEDIR}/${dir})
    list(APPEND installed ${path})
  endforeach()
  list(SORT installed)
  list(JOIN installed "\n" installed)
  file(CONFIGURE OUTPUT ${PEERCONF_PUBLIC_HEADERS_FILE} CONTENT "${installed}\n")
  install(EXPORT peerconfTargets NAMESPACE peerconf:: DESTINATION ${PEERCONF_INSTALL_CMAKEDIR})

  peerconf_package_dependencies("${libraries}" PEERCONF_PACKAGE_DEPENDENCIES)
  set(PEERCONF_CUDATOOLKIT_ROOT "${CUDAToolkit_ROOT}")
  configure_package_config_file(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/peerconfConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/peerconfConfig.cmake
                                INSTALL_DESTINATION ${PEERCONF_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/peerconfConfigVersion.cmake
                                   COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/peerconfConfig.cmake
                ${PROJECT_BINARY_DIR}/peerconfConfigVersion.cmake
          DESTINATION ${PEERCONF_INSTALL_CMAKEDIR})
  # The scenario language's schema and its guide, so that a team's files can point their
  # `$schema` line at the install (share/peerconf/schema.json), not into a source checkout.
  install(FILES ${PROJECT_SOURCE_DIR}/scenarios/schema.json ${PROJECT_SOURCE_DIR}/scenarios/README.md
          DESTINATION ${CMAKE_INSTALL_DATADIR}/peerconf)
endfunction()

# At the end of the top-level directory, once every folder has defined its targets.
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL peerconf_install)
