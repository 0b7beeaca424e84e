# The runtime table program (runtime_table.cc), built once per runtime over HIP's API names as
# src/hip is: peerconf_runtime_table_mock (ctest, tests/conformance) and, with the CUDA variant,
# peerconf_runtime_table_cuda (a nightly stage; built with or without BUILD_TESTING, from
# tests/gpu). Both read tests/conformance/runtime_table.yaml.
#   peerconf_add_runtime_table(<variant> <HIP define> SOURCES <the variant's abort rows> LIBS ...)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
function(peerconf_add_runtime_table variant define)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  set(dir ${PROJECT_SOURCE_DIR}/tests/conformance)
  set(target peerconf_runtime_table_${variant})
  add_executable(${target} ${dir}/runtime_table.cc ${dir}/ranks.cc ${ARG_SOURCES})
  target_compile_definitions(${target} PRIVATE PEERCONF_HIP_NS=table_${variant} ${define})
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE peerconf::hip_backend_${variant} yaml-cpp CLI11::CLI11
                                          ${ARG_LIBS})
endfunction()
