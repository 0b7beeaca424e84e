// The layout a data-plane spec names (model/dataplane_spec.h): its shape from the spec, and an
// unknown layout refused by name; the workloads' names and what each is to the engine.
#include "model/dataplane_spec.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace peerconf::harness::dataplane {

using model::makeLayout;
using model::Spec;
namespace {

TEST(DataPlaneSpec, TheSpecNamesTheLayout) {
  Spec spec;
  spec.depth = 3;
  spec.payload = 4;
  const layout::Layout l = makeLayout(spec, 3);
  EXPECT_EQ(l.ranks, 3);
  EXPECT_EQ(l.depth, 3);
  EXPECT_EQ(l.payloadWords, 4);
  EXPECT_EQ(l.windowNs, 2'000'000u);
  spec.layout = "no-such-layout";
  try {
    (void)makeLayout(spec, 2);
    FAIL() << "an unknown layout was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown data-plane layout 'no-such-layout'");
  }
}

// Every workload has its name both ways and its own engine workload; two-in-flight counts two
// collectives a step (its history and findings count collectives), the others one.
TEST(DataPlaneSpec, WorkloadsByNameAndWhatTheEngineRuns) {
  using model::Workload;
  for (const Workload w : {Workload::kExchange, Workload::kAllReduce, Workload::kTwoInFlight,
                           Workload::kTwoInFlightSharedSlots, Workload::kGraphReplay,
                           Workload::kGraphReplayCapturedEpoch}) {
    SCOPED_TRACE(model::toString(w));
    EXPECT_EQ(model::workloadFromName(model::toString(w)), w);
    EXPECT_EQ(model::toString(w), layout::workloadName(model::engineWorkload(w)));
    const bool two = w == Workload::kTwoInFlight || w == Workload::kTwoInFlightSharedSlots;
    EXPECT_EQ(model::collectivesPerStep(w), two ? 2u : 1u);
    EXPECT_EQ(model::readsAllReduceInputs(w), two || w == Workload::kAllReduce);
  }
  EXPECT_FALSE(model::workloadFromName("three-in-flight"));
}

}  // namespace
}  // namespace peerconf::harness::dataplane
