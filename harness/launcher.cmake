# The run stages: recording decorators, the rank runner, the launchers, the suite driver, and
# the `peerconf` executable.
add_library(peerconf_harness
  recording.cc
  rank_runner.cc
  thread_launcher.cc
  mock_ledger.cc
  rank_settle.cc
  mpi_launcher.cc
  suite.cc
  isolation.cc
  supervisor.cc
  core_registry.cc
)
add_library(peerconf::harness ALIAS peerconf_harness)
target_include_directories(peerconf_harness PUBLIC
  $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}>)
target_link_libraries(peerconf_harness
  PUBLIC peerconf::harness_base peerconf::faults peerconf::checkers peerconf::reports
         peerconf::backends peerconf::thread_group peerconf::mpi_group peerconf::mock_hip
         nlohmann_json::nlohmann_json Threads::Threads)

add_executable(peerconf main.cc)
target_link_libraries(peerconf PRIVATE peerconf::harness CLI11::CLI11)
install(TARGETS peerconf RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
