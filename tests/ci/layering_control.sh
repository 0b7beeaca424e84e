#!/bin/sh
# Negative controls of ci/layering.py: a copy of what the check reads (ci/layers.txt and the
# layers' folders) with one kind of wrong-way edge planted must fail the check, naming each
# planted edge by file, layer and what it reaches.
#   layering_control.sh ROOT CASE
# CASE (one ctest each, layering/planted-<CASE>-fails):
#   wrong-way        the model including the launch layer ("quoted")
#   angle-include    the core including <faults/fault_plan.h> (angle brackets reach project headers
#                    through the public include directories)
#   other-extension  a .ipp of the model and a .inl of the core including upward
#   cmake-variable   the model linking the launch layer through ${VAR} (set and list(APPEND))
#   generator-expr   the model linking upward inside $<$<BOOL:..>:..> and $<LINK_ONLY:..>
#   core-mock-hip    the core including the mocked runtime's control header
#   core-groups      the core including a group and a backend, and linking the MPI group
#   backend-factory  the HIP backend including the backend factory that sits above it
#   bench            a benchmark including the driver; a test helper including a planted core
#   protocol-api     a built-in layout including an internal core header (the layout layer uses
#                    core:public only), and the protocol API including a built-in layout
set -eu
root=$1
case=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ci/bench" "$tmp/tests"
cp "$root/ci/layers.txt" "$tmp/ci/"
cp "$root/ci/bench/CMakeLists.txt" "$root"/ci/bench/*.cc "$tmp/ci/bench/"
cp -r "$root/harness" "$root/faults" "$root/src" "$tmp/"
cp -r "$root/tests/planted" "$root/tests/support" "$root/tests/conformance" "$tmp/tests/"

# expect REGEX...: every line must be in the check's output.
expect() {
  for want in "$@"; do
    if ! echo "$out" | grep -q "$want"; then
      echo "the check did not name the planted edge: $want"
      exit 1
    fi
  done
}

case $case in
  wrong-way)
    echo '#include "launch/launcher.h"' >> "$tmp/harness/model/verdict.h"
    set -- '^harness/model/verdict.h:[0-9]*: model includes "launch/launcher.h" .* of layer launch,'
    ;;
  angle-include)
    echo '#include <faults/fault_plan.h>' >> "$tmp/src/errors.cc"
    set -- '^src/errors.cc:[0-9]*: core includes <faults/fault_plan.h> (faults/fault_plan.h) of layer faults,'
    ;;
  other-extension)
    printf '#pragma once\n#include "launch/launcher.h"\n' > "$tmp/harness/model/verdict_impl.ipp"
    printf '#pragma once\n#include "thread/thread_world.h"\n' > "$tmp/src/peer_buffer_impl.inl"
    set -- '^harness/model/verdict_impl.ipp:2: model includes "launch/launcher.h" .* of layer launch,' \
      '^src/peer_buffer_impl.inl:2: core includes "thread/thread_world.h" .* of layer thread,'
    ;;
  cmake-variable)
    cat >> "$tmp/harness/model/CMakeLists.txt" <<'EOF'
set(PEERCONF_MODEL_EXTRA_LIBS peerconf::judge)
list(APPEND PEERCONF_MODEL_EXTRA_LIBS peerconf::launch)
target_link_libraries(peerconf_model PRIVATE ${PEERCONF_MODEL_EXTRA_LIBS})
EOF
    set -- '^harness/model/CMakeLists.txt:[0-9]*: model links peerconf::judge of layer judge,' \
      '^harness/model/CMakeLists.txt:[0-9]*: model links peerconf::launch of layer launch,'
    ;;
  generator-expr)
    cat >> "$tmp/harness/model/CMakeLists.txt" <<'EOF'
target_link_libraries(peerconf_model
  PRIVATE $<$<BOOL:${PEERCONF_WITH_CUDA}>:peerconf_launch> $<LINK_ONLY:peerconf::reports>)
EOF
    set -- '^harness/model/CMakeLists.txt:[0-9]*: model links peerconf_launch of layer launch,' \
      '^harness/model/CMakeLists.txt:[0-9]*: model links peerconf::reports of layer reports,'
    ;;
  core-mock-hip)
    echo '#include "mock_hip/control.h"' >> "$tmp/src/peer_buffer.cc"
    set -- '^src/peer_buffer.cc:[0-9]*: core includes "mock_hip/control.h" .* of layer mock_hip,'
    ;;
  core-groups)
    echo '#include "thread/thread_group.h"' >> "$tmp/src/tp_agree.cc"
    echo '#include "hip/hip_backend.h"' >> "$tmp/src/exchange_entry.h"
    echo 'target_link_libraries(peerconf_core PRIVATE peerconf::mpi_group)' \
      >> "$tmp/src/CMakeLists.txt"
    set -- '^src/tp_agree.cc:[0-9]*: core includes "thread/thread_group.h" .* of layer thread,' \
      '^src/exchange_entry.h:[0-9]*: core includes "hip/hip_backend.h" .* of layer hip,' \
      '^src/CMakeLists.txt:[0-9]*: core links peerconf::mpi_group of layer mpi,'
    ;;
  backend-factory)
    echo '#include "backend_factory.h"' >> "$tmp/src/hip/hip_backend.cc"
    set -- '^src/hip/hip_backend.cc:[0-9]*: hip includes "backend_factory.h" .* of layer backends,'
    ;;
  bench)
    echo '#include "driver/suite.h"' >> "$tmp/ci/bench/explore_bench.cc"
    echo '#include "planted/registry.h"' >> "$tmp/tests/support/caught.h"
    set -- '^ci/bench/explore_bench.cc:[0-9]*: bench includes "driver/suite.h" .* of layer driver,' \
      '^tests/support/caught.h:[0-9]*: support includes "planted/registry.h" .* of layer planted,'
    ;;
  protocol-api)
    echo '#include "exchange_entry.h"' >> "$tmp/src/layout/protocol.h"
    echo '#include "layout/layout.h"' >> "$tmp/src/layout/rank_base.h"
    set -- '^src/layout/protocol.h:[0-9]*: layout includes "exchange_entry.h" (src/exchange_entry.h), which is not a public header of core' \
      '^src/layout/rank_base.h:[0-9]*: protocol includes "layout/layout.h" .* of layer layout,'
    ;;
  *)
    echo "layering_control.sh: unknown case $case"
    exit 2
    ;;
esac

if out=$(python3 "$root/ci/layering.py" --root "$tmp"); then
  echo "the planted wrong-way edge ($case) passed the layering check:"
  echo "$out"
  exit 1
fi
echo "$out"
expect "$@"
