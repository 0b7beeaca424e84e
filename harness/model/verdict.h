// Verdict: the typed result of one checker on one run, with a reproduce command.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/run_record.h"
#include "name_table.h"

namespace peerconf::harness::model {

enum class Property {
  kC1Uniform,      // every rank returned, or every rank raised (as expected)
  kC2Message,      // "this" on the failing rank with its cause, "another" elsewhere
  kC3Cleanup,      // every mapping closed once, every buffer freed once, close() idempotent
  kC4Addresses,    // own slot = local pointer; patterns written through peers land in them
  kC5Agreement,    // tpAgree is true iff every rank passed true
  kC6NoOverwrite,  // data plane: no write lands on an unconsumed slot
  kC7NoStale,      // data plane: no stale pair accepted
  kC8Bounded,      // the run ended within its bound; dead/hung ranks reported
};

// "C1", ... (scenario files, records); "C1 uniform outcome", ... (reports).
inline constexpr NameTable<Property, 8> kPropertyNames{{{
    {Property::kC1Uniform, "C1"},
    {Property::kC2Message, "C2"},
    {Property::kC3Cleanup, "C3"},
    {Property::kC4Addresses, "C4"},
    {Property::kC5Agreement, "C5"},
    {Property::kC6NoOverwrite, "C6"},
    {Property::kC7NoStale, "C7"},
    {Property::kC8Bounded, "C8"},
}}};
inline constexpr NameTable<Property, 8> kPropertyTitles{{{
    {Property::kC1Uniform, "C1 uniform outcome"},
    {Property::kC2Message, "C2 message"},
    {Property::kC3Cleanup, "C3 cleanup"},
    {Property::kC4Addresses, "C4 addresses"},
    {Property::kC5Agreement, "C5 agreement"},
    {Property::kC6NoOverwrite, "C6 no unread data overwritten"},
    {Property::kC7NoStale, "C7 no stale acceptance"},
    {Property::kC8Bounded, "C8 bounded"},
}}};

std::string toString(Property property);   // "C1 uniform outcome", ...
std::string shortName(Property property);  // "C1"

// Whether a scenario's `violations` entry names `property`: "C6", "c6", its title ("C6 no unread
// data overwritten"), or its id followed by anything but a digit ("C6: ...", "C6 no overwrite").
bool namesProperty(std::string_view entry, Property property);

struct Finding {
  int rank = -1;  // -1: not about one rank
  std::string text;
};

struct Verdict {
  Property property = Property::kC1Uniform;
  enum class Status { kPass, kFail, kNotApplicable } status = Status::kPass;
  std::string summary;             // one line
  std::vector<Finding> findings;   // rank by rank
  std::string reproduce;           // `peerconf run FILE --seed S --launcher L`
  bool expectedViolation = false;  // the scenario expects this property to fail (control)
  bool mayFail = false;            // the scenario lets it fail with its named finding, or pass

  bool failed() const noexcept { return status == Status::kFail; }
  // A verdict is acceptable when it passed, or it failed and the scenario expected it to.
  // (A property the scenario lets fail: either; the judge holds a failure to its named finding.)
  bool acceptable() const noexcept {
    if (mayFail) return true;
    return expectedViolation ? status == Status::kFail : status != Status::kFail;
  }
};

inline constexpr NameTable<Verdict::Status, 3> kVerdictStatusNames{{{
    {Verdict::Status::kPass, "pass"},
    {Verdict::Status::kFail, "fail"},
    {Verdict::Status::kNotApplicable, "n/a"},
}}};

}  // namespace peerconf::harness::model
