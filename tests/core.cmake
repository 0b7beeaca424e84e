# Unit tests of the core against gMock mocks of both seams.
peerconf_add_test(peer_buffer_test
  SOURCES peer_buffer_test.cc exchange_entry_test.cc
  LIBS peerconf::core
  LABELS unit)
