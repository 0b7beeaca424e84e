# `cmake --install`: the libraries of src/, faults/ and harness/ as peerconf:: targets (the list
# in peerconf_install()), their headers under include/peerconf/, the `peerconf` command, and a
# package config (find_package(peerconf)). Each target keeps the name its alias has in the build
# (peerconf_mock_hip -> peerconf::mock_hip).
include(CMakePackageConfigHelpers)

set(PEERCONF_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/peerconf)
set(PEERCONF_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/peerconf)

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
    peerconf_model peerconf_scenario peerconf_dataplane peerconf_launch peerconf_mpirun
    peerconf_checkers peerconf_judge peerconf_reports peerconf_explore peerconf_driver)
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
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/ DESTINATION ${PEERCONF_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/faults/ DESTINATION ${PEERCONF_INSTALL_INCLUDEDIR}/faults
          FILES_MATCHING PATTERN "*.h")
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/harness/ DESTINATION ${harness_include}
          FILES_MATCHING PATTERN "*.h")
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
endfunction()

# At the end of the top-level directory, once every folder has defined its targets.
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL peerconf_install)
