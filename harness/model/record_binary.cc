// The binary codec (record_binary.h): one field list a struct, read and written by the same
// template; numbers as their bytes, strings and containers with a count in front.
#include "model/record_binary.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace peerconf::harness::model {

namespace {

template <typename T>
struct IsVector : std::false_type {};
template <typename T, typename A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsMap : std::false_type {};
template <typename K, typename V, typename C, typename A>
struct IsMap<std::map<K, V, C, A>> : std::true_type {};
template <typename T>
struct IsDuration : std::false_type {};
template <typename R, typename P>
struct IsDuration<std::chrono::duration<R, P>> : std::true_type {};

class Writer {
 public:
  static constexpr bool kReading = false;
  explicit Writer(std::string& out) : out_(out) {}
  void bytes(void* data, std::size_t n) {
    if (n != 0) out_.append(static_cast<const char*>(data), n);
  }
  std::uint64_t count(std::uint64_t n) {
    bytes(&n, sizeof n);
    return n;
  }

 private:
  std::string& out_;
};

class Reader {
 public:
  static constexpr bool kReading = true;
  explicit Reader(std::string_view& in) : in_(in) {}
  void bytes(void* data, std::size_t n) {
    if (n == 0) return;  // an empty vector's data() may be null: memcpy must not see it
    if (n > in_.size()) throw std::invalid_argument("binary record: the bytes end early");
    std::memcpy(data, in_.data(), n);
    in_.remove_prefix(n);
  }
  // A count of elements each at least `least` bytes long: never more than the bytes left allow.
  std::uint64_t count(std::uint64_t /*written*/, std::size_t least = 1) {
    std::uint64_t n = 0;
    bytes(&n, sizeof n);
    if (least != 0 && n > in_.size() / least) {
      throw std::invalid_argument("binary record: a count of " + std::to_string(n) + " with " +
                                  std::to_string(in_.size()) + " bytes left");
    }
    return n;
  }

 private:
  std::string_view& in_;
};

template <typename Ar, typename T>
void field(Ar& ar, T& value);

template <typename Ar, typename... T>
void fieldsOf(Ar& ar, T&... values) {
  (field(ar, values), ...);
}

// ---- The structs' field lists: a structured binding names every field, so that a struct that
// gains or loses one stops this file compiling (it must then travel too). ----

template <typename Ar>
void fields(Ar& ar, faults::SourceMark& v) {
  auto& [line, column] = v;
  fieldsOf(ar, line, column);
}

template <typename Ar>
void fields(Ar& ar, Fault& v) {
  auto& [site, ranks, peer, error, delay, at, code, step, buffer, onBuffer, size, label, registers,
         part, call, foreign, reordered, count, probability, mark, set] = v;
  fieldsOf(ar, site, ranks, peer, error, delay, at, code, step, buffer, onBuffer, size, label,
           registers, part, call, foreign, reordered, count, probability, mark, set);
}

template <typename Ar>
void fields(Ar& ar, MessageExpectation& v) {
  auto& [kind, text] = v;
  fieldsOf(ar, kind, text);
}

template <typename Ar>
void fields(Ar& ar, ExpectedFinding& v) {
  auto& [property, text, mark, may] = v;
  fieldsOf(ar, property, text, mark, may);
}

template <typename Ar>
void fields(Ar& ar, JudgeRefusal& v) {
  auto& [rule, text, mark] = v;
  fieldsOf(ar, rule, text, mark);
}

template <typename Ar>
void fields(Ar& ar, ExpectationMarks& v) {
  auto& [outcome, reported, messages, others] = v;
  fieldsOf(ar, outcome, reported, messages, others);
}

template <typename Ar>
void fields(Ar& ar, Expectation& v) {
  auto& [outcome, asDrawn, messages, others, reported, within, violations, findings, refusals,
         marks] = v;
  fieldsOf(ar, outcome, asDrawn, messages, others, reported, within, violations, findings, refusals,
           marks);
}

template <typename Ar>
void fields(Ar& ar, RunnerOptions& v) {
  auto& [agreeFirst] = v;
  fieldsOf(ar, agreeFirst);
}

template <typename Ar>
void fields(Ar& ar, Late& v) {
  auto& [rank, role, every, steps, delay] = v;
  fieldsOf(ar, rank, role, every, steps, delay);
}

template <typename Ar>
void fields(Ar& ar, Stop& v) {
  auto& [rank, step] = v;
  fieldsOf(ar, rank, step);
}

template <typename Ar>
void fields(Ar& ar, SpecMark& v) {
  auto& [line, column] = v;
  fieldsOf(ar, line, column);
}

template <typename Ar>
void fields(Ar& ar, layout::ChosenValue& v) {
  auto& [step, rank, element, bits] = v;
  fieldsOf(ar, step, rank, element, bits);
}

template <typename Ar>
void fields(Ar& ar, layout::PayloadDomain& v) {
  auto& [type, chosenCount, chosen] = v;
  fieldsOf(ar, type, chosenCount);
  for (layout::ChosenValue& one : chosen) fields(ar, one);
}

template <typename Ar>
void fields(Ar& ar, Spec& v) {
  auto& [layout, workload, steps, depth, payload, startEpoch, timeout, window, history, prefill,
         values, late, stop, marks] = v;
  fieldsOf(ar, layout, workload, steps, depth, payload, startEpoch, timeout, window, history,
           prefill, values, late, stop, marks);
}

template <typename Ar>
void fields(Ar& ar, BufferSpec& v) {
  auto& [bytes, label, mark, dataPlane, dataPlaneMark] = v;
  fieldsOf(ar, bytes, label, mark, dataPlane, dataPlaneMark);
}

template <typename Ar>
void fields(Ar& ar, Scenario& v) {
  auto& [file, name, description, ranks, bufferBytes, buffers, buffersAlive, deviceMemory,
         ranksPerGpu, nodes, seed, deadline, faults, expect, launchers, clock, dataPlane, core,
         coreMark, maxRun, runner, mark] = v;
  fieldsOf(ar, file, name, description, ranks, bufferBytes, buffers, buffersAlive, deviceMemory,
           ranksPerGpu, nodes, seed, deadline, faults, expect, launchers, clock, dataPlane, core,
           coreMark, maxRun, runner, mark);
}

template <typename Ar>
void fields(Ar& ar, LedgerRecord& v) {
  auto& [op, ptr, size, ownerDevice, generation, error] = v;
  fieldsOf(ar, op, ptr, size, ownerDevice, generation, error);
}

template <typename Ar>
void fields(Ar& ar, Event& v) {
  auto& [tNs, rank, kind, what, peer, detail, fault, buffer] = v;
  fieldsOf(ar, tNs, rank, kind, what, peer, detail, fault, buffer);
}

template <typename Ar>
void fields(Ar& ar, InBandFinding& v) {
  auto& [violation, rank, peer, slot, step, epoch, text] = v;
  fieldsOf(ar, violation, rank, peer, slot, step, epoch, text);
}

template <typename Ar>
void fields(Ar& ar, DataplaneEvent& v) {
  auto& [kind, peer, slot, step, epoch, tag, aux, tNs, t2Ns, check, want, source, tagless] = v;
  fieldsOf(ar, kind, peer, slot, step, epoch, tag, aux, tNs, t2Ns, check, want, source, tagless);
}

template <typename Ar>
void fields(Ar& ar, Result& v) {
  auto& [layout, workload, ranks, depth, slots, payloadWords, generation, startEpoch, stepsPlanned,
         stepsDone, elapsedNs, timeoutNs, clockDomain, outcome, detail, waitWhat, waitPeer,
         waitSlot, waitEpoch, waitStep, abortedBy, pairsRead, pairsGenuine, overwrites, stale,
         wrongResults, findings, historySteps, history] = v;
  fieldsOf(ar, layout, workload, ranks, depth, slots, payloadWords, generation, startEpoch,
           stepsPlanned, stepsDone, elapsedNs, timeoutNs, clockDomain, outcome, detail, waitWhat,
           waitPeer, waitSlot, waitEpoch, waitStep, abortedBy, pairsRead, pairsGenuine, overwrites,
           stale, wrongResults, findings, historySteps, history);
}

template <typename Ar>
void fields(Ar& ar, RankResult& v) {
  auto& [rank, status, errorType, message, thisRank, cause, causeCode, causeOp, causePeer,
         ownSlotIsLocal, addressFindings, mappingFindings, tableChecked, hostTable, deviceTable,
         tableError, closeTwiceOk, leftAfterClose, closeErrors, closeErrorType, closeFailures,
         ledgerAtClose, ledgerAfterDestroy, ledger, ledgerAvailable, harnessReleases,
         deviceLeftovers, events, endNs, dataPlane, laterDataPlanes] = v;
  fieldsOf(ar, rank, status, errorType, message, thisRank, cause, causeCode, causeOp, causePeer,
           ownSlotIsLocal, addressFindings, mappingFindings, tableChecked, hostTable, deviceTable,
           tableError, closeTwiceOk, leftAfterClose, closeErrors, closeErrorType, closeFailures,
           ledgerAtClose, ledgerAfterDestroy, ledger, ledgerAvailable, harnessReleases,
           deviceLeftovers, events, endNs, dataPlane, laterDataPlanes);
}

template <typename Ar>
void fields(Ar& ar, RunRecord& v) {
  auto& [scenario, launcher, runtime, seed, core, clock, ranks, wallNs, firedSites, harnessErrors,
         requireCoverage] = v;
  fieldsOf(ar, scenario, launcher, runtime, seed, core, clock, ranks, wallNs, firedSites,
           harnessErrors, requireCoverage);
}

// ---- One value ----

template <typename Ar, typename T>
void field(Ar& ar, T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    std::uint8_t b = value ? 1 : 0;
    ar.bytes(&b, 1);
    if constexpr (Ar::kReading) value = b != 0;
  } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
    ar.bytes(&value, sizeof value);
  } else if constexpr (IsDuration<T>::value) {
    auto ticks = value.count();
    ar.bytes(&ticks, sizeof ticks);
    if constexpr (Ar::kReading) value = T(ticks);
  } else if constexpr (std::is_same_v<T, std::string>) {
    const std::uint64_t n = ar.count(value.size());
    if constexpr (Ar::kReading) value.resize(n);
    ar.bytes(value.data(), n);
  } else if constexpr (IsVector<T>::value) {
    using Element = typename T::value_type;
    constexpr bool kFlat = std::is_trivially_copyable_v<Element> && !std::is_same_v<Element, bool>;
    std::uint64_t n = 0;
    if constexpr (Ar::kReading) {
      n = ar.count(0, kFlat ? sizeof(Element) : 1);
      value.resize(n);
    } else {
      n = ar.count(value.size());
    }
    if constexpr (kFlat) {
      ar.bytes(value.data(), n * sizeof(Element));
    } else {
      for (auto& element : value) field(ar, element);
    }
  } else if constexpr (IsOptional<T>::value) {
    bool present = value.has_value();
    field(ar, present);
    if constexpr (Ar::kReading) {
      value.reset();
      if (present) value.emplace();
    }
    if (present) field(ar, *value);
  } else if constexpr (IsMap<T>::value) {
    const std::uint64_t n = ar.count(value.size());
    if constexpr (Ar::kReading) {
      value.clear();
      for (std::uint64_t i = 0; i < n; ++i) {
        typename T::key_type key{};
        typename T::mapped_type mapped{};
        field(ar, key);
        field(ar, mapped);
        value.emplace_hint(value.end(), std::move(key), std::move(mapped));
      }
    } else {
      for (auto& [key, mapped] : value) {
        auto k = key;
        field(ar, k);
        field(ar, mapped);
      }
    }
  } else {
    fields(ar, value);
  }
}

template <typename T>
void write(const T& value, std::string& out) {
  Writer writer(out);
  field(writer, const_cast<T&>(value));  // the writer only reads
}

template <typename T>
T read(std::string_view& in) {
  Reader reader(in);
  T value{};
  field(reader, value);
  return value;
}

}  // namespace

void encodeBinary(const Scenario& scenario, std::string& out) { write(scenario, out); }
void encodeBinary(const RunRecord& record, std::string& out) { write(record, out); }
Scenario scenarioFromBinary(std::string_view& in) { return read<Scenario>(in); }
RunRecord runRecordFromBinary(std::string_view& in) { return read<RunRecord>(in); }

}  // namespace peerconf::harness::model
