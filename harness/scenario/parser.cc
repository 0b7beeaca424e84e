// Scenario parser: walks one YAML document into a Scenario, checking every key where it is
// written so that each error carries the line and column of the node at fault.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "exchange_entry.h"
#include "model/buffers.h"
#include "model/fault_sites.h"
#include "model/scenario.h"
#include "model/verdict.h"
#include "scenario/dataplane_yaml.h"
#include "scenario/load.h"
#include "scenario/rules.h"
#include "scenario/values.h"
#include "scenario/yaml_reader.h"

namespace peerconf::harness::scenario {

using model::Expectation;
using model::Fault;
using model::FaultSite;
using model::kMessageKindNames;
using model::kOutcomeNames;
using model::kPropertyNames;
using model::Mark;
using model::MessageExpectation;
using model::MessageKind;
using model::Point;
using model::Scenario;
using model::toString;

namespace {

constexpr int kMaxRanks = 64;
// The most steps a `dataplane:` section runs (dataplane.steps), so the largest step a fault names.
constexpr std::int64_t kMaxDataplaneStep = 1'000'000'000;

constexpr std::array<std::string_view, 19> kTopKeys{
    "name", "description", "ranks",  "buffer",        "buffers",   "buffers_alive", "device_memory",
    "seed", "deadline",    "faults", "expect",        "launchers", "clock",         "dataplane",
    "core", "max_run",     "runner", "ranks_per_gpu", "nodes"};
constexpr std::array<std::string_view, 3> kBufferKeys{"size", "label", "dataplane"};
// The most buffers a rank constructs in one run: enough for an order to differ, few enough that
// a run stays one handshake's worth of calls a buffer.
constexpr std::size_t kMaxBuffers = 8;
constexpr std::array<std::string_view, 1> kRunnerKeys{"agree_first"};
constexpr std::array<std::string_view, 6> kExpectKeys{"outcome", "messages",   "reported",
                                                      "within",  "violations", "judge"};
constexpr std::array<std::string_view, 1> kTextKey{"text"};
constexpr std::array<std::string_view, 3> kViolationKeys{"property", "finding", "appear"};
constexpr std::array<std::string_view, 2> kRefusalKeys{"rule", "finding"};

// The names of a fault's keys: site, rank, ranks, then the trait table's (model/fault_sites.h).
const std::vector<std::string_view>& faultKeys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> out{"site", "rank", "ranks", "peers"};
    for (model::Key key : model::allKeys()) out.push_back(model::keyName(key));
    return out;
  }();
  return keys;
}

// Every site's name (faults::allSites() order) and every point's.
const std::vector<std::string_view>& siteNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (FaultSite site : faults::allSites()) out.push_back(faults::siteName(site));
    return out;
  }();
  return names;
}

std::vector<std::string_view> pointNames(std::span<const Point> points) {
  std::vector<std::string_view> out;
  for (Point point : points) out.push_back(faults::pointName(point));
  return out;
}

std::string rangeText(int ranks) {
  return "the scenario has " + std::to_string(ranks) + (ranks == 1 ? " rank (0)" : " ranks (0..") +
         (ranks == 1 ? "" : std::to_string(ranks - 1) + ")");
}

class Parser : YamlReader {
 public:
  explicit Parser(std::string file) : YamlReader(std::move(file)) {}

  Scenario parse(const std::string& text) {
    const YAML::Node root = load(text);
    try {
      return parseRoot(root);
    } catch (const YAML::Exception& e) {
      fail(toMark(e.mark), e.msg);
    }
  }

 private:
  int rankIn(const YAML::Node& node, const std::string& what, int ranks) const {
    const std::int64_t value = integerIn(node, what);
    if (value < 0 || value >= ranks) {
      fail(toMark(node.Mark()),
           what + " " + std::to_string(value) + " is out of range: " + rangeText(ranks));
    }
    return static_cast<int>(value);
  }

  // The top level, key by key in a fixed order (so that of two errors the same one is reported
  // first), then the expectation and the rules that tie the keys together.
  Scenario parseRoot(const YAML::Node& root) {
    Scenario scenario;
    scenario.file = file();
    scenario.mark = toMark(root.Mark());
    const std::vector<Entry> top = entries(root, "the scenario", scenario.mark);
    checkKnown(top, kTopKeys, "the scenario");

    scenario.ranks = parseRanks(top, scenario.mark);
    parseName(top, scenario);
    if (const Entry* description = find(top, "description")) {
      scenario.description = string(*description);
    }
    if (const Entry* buffer = find(top, "buffer")) scenario.bufferBytes = parseBuffer(*buffer);
    parseBuffers(top, scenario);
    if (const Entry* memory = find(top, "device_memory")) parseDeviceMemory(*memory, scenario);
    if (const Entry* nodes = find(top, "nodes")) parseNodes(*nodes, scenario);
    if (const Entry* perGpu = find(top, "ranks_per_gpu")) parseRanksPerGpu(*perGpu, scenario);
    if (const Entry* seed = find(top, "seed")) scenario.seed = parseSeed(*seed);
    if (const Entry* deadline = find(top, "deadline")) scenario.deadline = duration(*deadline);
    if (const Entry* core = find(top, "core")) parseCore(*core, scenario);
    if (const Entry* launchers = find(top, "launchers")) parseLaunchers(*launchers, scenario);

    if (const Entry* clock = find(top, "clock")) scenario.clock = parseClock(*clock);

    if (const Entry* faults = find(top, "faults")) parseFaults(*faults, scenario);
    if (const Entry* dataPlane = find(top, "dataplane")) {
      scenario.dataPlane = parseSpec(dataPlane->value, scenario.ranks, file());
    }
    if (const Entry* runner = find(top, "runner")) parseRunner(*runner, scenario);

    parseExpectation(top, scenario);
    return scenario;
  }

  // `ranks`, required: 1..kMaxRanks.
  int parseRanks(const std::vector<Entry>& top, const Mark& mark) const {
    const Entry* ranks = find(top, "ranks");
    if (ranks == nullptr)
      fail(mark, "missing required key 'ranks' (1.." + std::to_string(kMaxRanks) + ")");
    const std::int64_t rankCount = integer(*ranks);
    if (rankCount < 1 || rankCount > kMaxRanks) {
      fail(ranks->valueMark(), "'ranks' must be between 1 and " + std::to_string(kMaxRanks) +
                                   ", got " + std::to_string(rankCount));
    }
    return static_cast<int>(rankCount);
  }

  // `name`: one word, the file's stem when not given.
  void parseName(const std::vector<Entry>& top, Scenario& scenario) const {
    scenario.name = std::filesystem::path(file()).stem().string();
    if (const Entry* name = find(top, "name")) {
      scenario.name = string(*name);
      if (scenario.name.empty() || scenario.name.find_first_of(" \t\r\n") != std::string::npos) {
        fail(name->valueMark(),
             "'name' must be a non-empty word without spaces (it names the "
             "test in reports), got \"" +
                 echo(scenario.name) + "\"");
      }
    }
  }

  // `buffer`: bytes, or a size with a unit.
  std::size_t parseBuffer(const Entry& buffer) const {
    std::optional<std::size_t> bytes;
    if (buffer.value.IsScalar()) bytes = parseByteSize(buffer.value.Scalar());
    if (!bytes) {
      fail(buffer.valueMark(),
           "'buffer' must be a positive size: bytes (65536) or a string like \"64KiB\" (units "
           "B, KiB, MiB, GiB), got " +
               describe(buffer.value));
    }
    return *bytes;
  }

  // `device_memory`: one size for every rank's device, or a map of rank to size.
  void parseDeviceMemory(const Entry& memory, Scenario& scenario) const {
    const std::string want =
        "'device_memory' must be a positive size (\"64MiB\", bytes or units B, KiB, MiB, GiB) "
        "for every rank's device, or a map of rank to size like {1: 1MiB}, got ";
    auto size = [&](const YAML::Node& node) {
      std::optional<std::size_t> bytes;
      if (node.IsScalar()) bytes = parseByteSize(node.Scalar());
      if (!bytes) fail(toMark(node.Mark()), want + describe(node));
      return *bytes;
    };
    if (memory.value.IsScalar()) {
      const std::size_t bytes = size(memory.value);
      for (int rank = 0; rank < scenario.ranks; ++rank) scenario.deviceMemory[rank] = bytes;
      return;
    }
    if (!memory.value.IsMap() || memory.value.size() == 0) {
      fail(memory.valueMark(), want + describe(memory.value));
    }
    for (const Entry& entry : entries(memory.value, "'device_memory'", memory.valueMark())) {
      const int rank = rankIn(entry.keyNode, "device_memory rank", scenario.ranks);
      scenario.deviceMemory[rank] = size(entry.value);
    }
  }

  // `nodes`: 1..ranks nodes of equally many consecutive ranks (model/scenario.h).
  void parseNodes(const Entry& nodes, Scenario& scenario) const {
    const std::int64_t value = integerIn(nodes.value, "'nodes'");
    if (value < 1 || value > scenario.ranks || scenario.ranks % value != 0) {
      fail(nodes.valueMark(), "'nodes' must divide 'ranks' (" + std::to_string(scenario.ranks) +
                                  "): each node holds ranks / nodes consecutive ranks, got " +
                                  std::to_string(value));
    }
    scenario.nodes = static_cast<int>(value);
  }

  // `ranks_per_gpu`: 1..ranks ranks (of a node, with `nodes`) on each mocked GPU; the devices of
  // one GPU share its memory, so ranks sharing a GPU must be given the same device_memory (it is
  // the GPU's).
  void parseRanksPerGpu(const Entry& perGpu, Scenario& scenario) const {
    const std::int64_t value = integerIn(perGpu.value, "'ranks_per_gpu'");
    const int perNode = scenario.nodes > 1 ? scenario.ranks / scenario.nodes : scenario.ranks;
    if (value < 1 || value > perNode) {
      fail(perGpu.valueMark(), "'ranks_per_gpu' must be 1.." + std::to_string(perNode) +
                                   " (the ranks on each mocked GPU" +
                                   (scenario.nodes > 1 ? ", a GPU within one node" : "") +
                                   "), got " + std::to_string(value));
    }
    scenario.ranksPerGpu = static_cast<int>(value);
    auto memoryOf = [&](int rank) -> std::optional<std::size_t> {
      const auto it = scenario.deviceMemory.find(rank);
      return it == scenario.deviceMemory.end() ? std::nullopt : std::optional(it->second);
    };
    std::map<int, int> firstOf;  // each GPU's first rank
    for (int rank = 0; rank < scenario.ranks; ++rank) {
      const int gpu = model::gpuOfRank(rank, scenario.ranks, scenario.ranksPerGpu, scenario.nodes);
      const int sibling = firstOf.emplace(gpu, rank).first->second;
      if (memoryOf(sibling) != memoryOf(rank)) {
        fail(perGpu.keyMark(), "ranks " + std::to_string(sibling) + " and " + std::to_string(rank) +
                                   " share mocked GPU " + std::to_string(gpu) +
                                   " (ranks_per_gpu), so device_memory is that GPU's: give them "
                                   "the same size");
      }
    }
  }

  std::uint64_t parseSeed(const Entry& seed) const {
    std::optional<std::uint64_t> value;
    if (isPlainScalar(seed.value)) value = parseUnsigned(seed.value.Scalar());
    if (!value) {
      fail(seed.valueMark(),
           "'seed' must be an unsigned 64-bit integer, got " + describe(seed.value));
    }
    return *value;
  }

  // `core`: the name of a core under test (checked against the registry later, with its mark).
  void parseCore(const Entry& core, Scenario& scenario) const {
    scenario.core = string(core);
    scenario.coreMark = core.valueMark();
    if (scenario.core.empty() || scenario.core.find_first_of(" \t\r\n") != std::string::npos) {
      fail(core.valueMark(),
           "'core' must be the name of a core under test (a word, e.g. leaks-on-failure), got " +
               describe(core.value));
    }
  }

  // `launchers`: threads and/or mpi, each once.
  void parseLaunchers(const Entry& launchers, Scenario& scenario) const {
    if (!launchers.value.IsSequence() || launchers.value.size() == 0) {
      fail(launchers.valueMark(),
           "'launchers' must be a non-empty list like [threads] or [mpi], got " +
               describe(launchers.value));
    }
    for (const YAML::Node& item : launchers.value) {
      const std::string name = item.IsScalar() ? item.Scalar() : std::string();
      if (name != "threads" && name != "mpi") {
        fail(toMark(item.Mark()),
             "unknown launcher " + describe(item) + " in 'launchers' (expected threads or mpi)");
      }
      if (std::find(scenario.launchers.begin(), scenario.launchers.end(), name) !=
          scenario.launchers.end()) {
        fail(toMark(item.Mark()), "launcher '" + name + "' is listed twice");
      }
      scenario.launchers.push_back(name);
    }
  }

  std::string parseClock(const Entry& clock) const {
    std::string name = clock.value.IsScalar() ? clock.value.Scalar() : std::string();
    if (name != "sim" && name != "real") {
      fail(clock.valueMark(),
           "'clock' must be sim or real (the clock the expectation is written for), got " +
               describe(clock.value));
    }
    return name;
  }

  void parseFaults(const Entry& faults, Scenario& scenario) const {
    if (!faults.value.IsSequence()) {
      fail(faults.valueMark(),
           "'faults' must be a list of faults (use [] for none), got " + describe(faults.value));
    }
    for (const YAML::Node& node : faults.value) {
      PeerSet set;
      Fault fault = parseFault(node, scenario, set);
      if (!set.given) {
        scenario.faults.push_back(std::move(fault));
        continue;
      }
      // One fault a (rank, peer) pair, the pairs in rank order, each peer in the set's order.
      const int first = static_cast<int>(scenario.faults.size());
      for (int rank : fault.ranks) {
        for (int peer : set.crossNode ? std::vector<int>{} : set.peers) {
          Fault member = fault;
          member.ranks = {rank};
          member.peer = peer;
          member.set = first;
          scenario.faults.push_back(std::move(member));
        }
        if (!set.crossNode) continue;
        for (int peer = 0; peer < scenario.ranks; ++peer) {
          if (model::nodeOf(scenario, peer) == model::nodeOf(scenario, rank)) continue;
          Fault member = fault;
          member.ranks = {rank};
          member.peer = peer;
          member.set = first;
          scenario.faults.push_back(std::move(member));
        }
      }
    }
  }

  // `peers:` of a fault: a list of peers, or `cross-node` (every peer on another of the file's
  // nodes than the rank's); the fault is planted once a (rank, peer) pair (parseFaults).
  struct PeerSet {
    bool given = false;
    bool crossNode = false;
    std::vector<int> peers;
  };

  void parsePeerSet(const std::vector<Entry>& keys, const Scenario& scenario, const Fault& fault,
                    const std::string& siteName, PeerSet& set) const {
    const Entry* peers = find(keys, "peers");
    if (peers == nullptr) return;
    if (!model::takes(fault.site, model::Key::kPeer) || model::stopsRank(fault.site) ||
        fault.site == FaultSite::kForeignException) {
      fail(peers->keyMark(), "key 'peers' is not valid for site " + inQuotes(siteName) +
                                 " (a set of peers: open, close, handle-corrupt, handle-stale, "
                                 "handle-aliased, handle-mapped, entry-corrupt)");
    }
    if (const Entry* peer = find(keys, "peer")) {
      fail(peer->keyMark(), "give either 'peer' or 'peers', not both");
    }
    set.given = true;
    if (peers->value.IsScalar() && peers->value.Scalar() == "cross-node") {
      if (scenario.nodes < 2) {
        fail(peers->valueMark(),
             "'peers: cross-node' needs the ranks grouped into 2 or more 'nodes' (the scenario's "
             "top-level key 'nodes'): without them every peer is on the rank's node");
      }
      set.crossNode = true;
      return;
    }
    if (!peers->value.IsSequence() || peers->value.size() == 0) {
      fail(peers->valueMark(),
           "'peers' must be a non-empty list of peers like [2, 3], or 'cross-node', got " +
               describe(peers->value));
    }
    for (const YAML::Node& item : peers->value) {
      const int value = rankIn(item, "peer", scenario.ranks);
      if (std::find(set.peers.begin(), set.peers.end(), value) != set.peers.end()) {
        fail(toMark(item.Mark()), "peer " + std::to_string(value) + " is listed twice");
      }
      if (fault.appliesTo(value)) {
        fail(toMark(item.Mark()), "peer " + std::to_string(value) +
                                      " is a rank of this fault: a rank never opens its own "
                                      "handle (its own slot is its local pointer)");
      }
      set.peers.push_back(value);
    }
  }

  // `expect`, required, and `max_run`; then the rules (scenario/rules.h) on the whole scenario.
  void parseExpectation(const std::vector<Entry>& top, Scenario& scenario) const {
    const Entry* expect = find(top, "expect");
    if (expect == nullptr) {
      fail(scenario.mark, "missing required key 'expect' (at least 'expect: {outcome: success}')");
    }
    scenario::ExpectMarks marks = parseExpect(*expect, scenario);
    if (const Entry* deadline = find(top, "deadline")) marks.deadline = deadline->valueMark();
    if (const Entry* maxRun = find(top, "max_run")) {
      scenario.maxRun = duration(*maxRun);
      marks.maxRunGiven = true;
      marks.maxRun = maxRun->valueMark();
    }
    scenario::apply(scenario, marks);
  }

  // `runner: {agree_first: BOOL}`.
  void parseRunner(const Entry& runner, Scenario& scenario) const {
    const std::vector<Entry> keys = entries(runner.value, "'runner'", runner.valueMark());
    checkKnown(keys, kRunnerKeys, "'runner'");
    if (const Entry* agreeFirst = find(keys, "agree_first")) {
      scenario.runner.agreeFirst = boolean(*agreeFirst);
    }
  }

  // entry-corrupt's `part` (required): which part of the peer's entry it damages.
  void parseEntryPart(const std::vector<Entry>& keys, const std::string& siteName,
                      Fault& fault) const {
    if (!model::takes(fault.site, model::Key::kPart)) return;
    static constexpr auto kParts = faults::kEntryPartNames.names();
    const Entry* part = find(keys, "part");
    if (part == nullptr) {
      fail(fault.mark, "an " + siteName + " fault needs 'part' (one of " + joined(kParts) +
                           "): which part of the peer's entry it damages");
    }
    fault.part = faults::kEntryPartNames.value(choice(*part, kParts, "entry part"));
  }

  // foreign-exception's `call` (required), and `peer` only with `call: open`.
  void parseSeamCall(const std::vector<Entry>& keys, const std::string& siteName,
                     Fault& fault) const {
    if (!model::takes(fault.site, model::Key::kCall)) return;
    static constexpr auto kCalls = faults::kSeamCallNames.names();
    const Entry* call = find(keys, "call");
    if (call == nullptr) {
      fail(fault.mark, "a " + siteName + " fault needs 'call' (one of " + joined(kCalls) +
                           "): the seam or group call that throws");
    }
    fault.call = faults::kSeamCallNames.value(choice(*call, kCalls, "call"));
    const Entry* peer = find(keys, "peer");
    if (peer != nullptr && fault.call != faults::SeamCall::kOpen) {
      fail(peer->keyMark(),
           "'peer' names the open that throws: it is valid only with "
           "'call: open', not 'call: " +
               std::string(faults::seamCallName(fault.call)) + "'");
    }
  }

  Fault parseFault(const YAML::Node& node, const Scenario& scenario, PeerSet& set) const {
    const int ranks = scenario.ranks;
    Fault fault;
    fault.mark = toMark(node.Mark());
    const std::vector<Entry> keys = entries(node, "a fault", fault.mark);
    checkKnown(keys, faultKeys(), "a fault");

    const Entry* site = find(keys, "site");
    if (site == nullptr) {
      fail(fault.mark, "a fault needs 'site' (one of " + joined(siteNames()) + ")");
    }
    fault.site = faults::allSites()[choice(*site, siteNames(), "fault site")];
    const std::string siteName = toString(fault.site);
    const model::Traits& traits = model::traitsOf(fault.site);

    checkSiteKeys(keys, traits, siteName);
    if (ranks == 1 && traits.needsPeers) {
      fail(site->valueMark(), "site " + inQuotes(siteName) +
                                  " never fires with 1 rank: a single rank exchanges no handles, "
                                  "opens no peers and has no group");
    }

    parseFaultRanks(keys, fault, ranks);

    if (const Entry* peer = find(keys, "peer")) {
      fault.peer = rankIn(peer->value, "peer", ranks);
      if (std::find(fault.ranks.begin(), fault.ranks.end(), *fault.peer) != fault.ranks.end()) {
        fail(peer->valueMark(), "peer " + std::to_string(*fault.peer) +
                                    " is a rank of this fault: a rank never opens its own handle "
                                    "(its own slot is its local pointer)");
      }
    }

    parsePeerSet(keys, scenario, fault, siteName, set);

    if (model::isErrorSite(fault.site)) {
      // hipErrorOutOfMemory for the allocations, hipErrorInvalidValue for the other calls.
      fault.error = faults::defaultError(fault.site);
      if (const Entry* error = find(keys, "error")) fault.error = hipError(*error);
    }

    parseFaultLimits(keys, fault);

    if (model::takes(fault.site, model::Key::kAt)) {
      parseFaultAt(keys, traits, ranks, fault);
    }
    checkStopPeer(keys, fault);
    parseStopStep(keys, fault);
    if (const Entry* code = find(keys, "code")) {
      const std::int64_t value = integer(*code);
      if (value < 0 || value > 255) {
        fail(code->valueMark(),
             "'code' is a process's exit status, 0..255, got " + std::to_string(value));
      }
      fault.code = static_cast<int>(value);
    }
    parseBufferFault(keys, *site, scenario, fault);
    parseEntryPart(keys, siteName, fault);
    parseSeamCall(keys, siteName, fault);
    if (model::takes(fault.site, model::Key::kDelay)) {
      const Entry* delay = find(keys, "delay");
      if (delay == nullptr && model::mustGive(fault.site, model::Key::kDelay)) {
        fail(fault.mark, "a " + siteName + " fault needs 'delay' (e.g. 100ms)");
      }
      if (delay != nullptr) fault.delay = duration(*delay);
    }
    return fault;
  }

  // `buffers:` a list of {size, label} (`buffer:` says the one buffer without it, not both), and
  // `buffers_alive:` together | one-at-a-time.
  void parseBuffers(const std::vector<Entry>& top, Scenario& scenario) const {
    const Entry* buffers = find(top, "buffers");
    const Entry* alive = find(top, "buffers_alive");
    if (buffers == nullptr) {
      if (alive != nullptr) {
        fail(alive->keyMark(),
             "'buffers_alive' says how the buffers of 'buffers:' live; give 'buffers' too");
      }
      return;
    }
    if (const Entry* buffer = find(top, "buffer")) {
      fail(buffer->keyMark(),
           "give either 'buffer' (one unlabelled buffer) or 'buffers' (a list), not both");
    }
    if (!buffers->value.IsSequence() || buffers->value.size() == 0 ||
        buffers->value.size() > kMaxBuffers) {
      fail(buffers->valueMark(), "'buffers' must be a list of 1 to " + std::to_string(kMaxBuffers) +
                                     " buffers like [{label: kv-cache, size: 4KiB}], got " +
                                     describe(buffers->value));
    }
    for (const YAML::Node& node : buffers->value) {
      model::BufferSpec spec;
      spec.mark = toMark(node.Mark());
      const std::vector<Entry> keys = entries(node, "a buffer", spec.mark);
      checkKnown(keys, kBufferKeys, "a buffer");
      const Entry* size = find(keys, "size");
      if (size == nullptr) fail(spec.mark, "a buffer needs 'size' (e.g. 4KiB)");
      spec.bytes = byteSize(*size, "size");
      if (const Entry* label = find(keys, "label")) spec.label = bufferLabel(*label);
      // The buffer's own data plane (model::dataPlaneOf); whether one may run is the rules'.
      if (const Entry* dataPlane = find(keys, "dataplane")) {
        spec.dataPlane = parseSpec(dataPlane->value, scenario.ranks, file());
        spec.dataPlaneMark = dataPlane->keyMark();
      }
      scenario.buffers.push_back(std::move(spec));
    }
    if (alive != nullptr) {
      static constexpr auto kAlive = model::kBuffersAliveNames.names();
      scenario.buffersAlive =
          model::kBuffersAliveNames.value(choice(*alive, kAlive, "buffers_alive"));
    }
  }

  // A positive size: bytes, or a string with a binary unit.
  std::size_t byteSize(const Entry& entry, const std::string& what) const {
    std::optional<std::size_t> bytes;
    if (entry.value.IsScalar()) bytes = parseByteSize(entry.value.Scalar());
    if (!bytes) {
      fail(entry.valueMark(), inQuotes(what) +
                                  " must be a positive size: bytes (4096) or a string like "
                                  "\"4KiB\" (units B, KiB, MiB, GiB), got " +
                                  describe(entry.value));
    }
    return *bytes;
  }

  // A label the exchange entry can carry (ExchangeEntry::validLabel); "" is no label.
  std::string bufferLabel(const Entry& entry) const {
    if (!entry.value.IsScalar()) {
      fail(entry.valueMark(), "'label' must be a string, got " + describe(entry.value));
    }
    std::string label = entry.value.Scalar();
    if (!ExchangeEntry::validLabel(label)) {
      fail(entry.valueMark(), "'label' must be at most " +
                                  std::to_string(ExchangeEntry::kLabelSize) +
                                  " printable ASCII characters (the exchange entry carries it), "
                                  "got \"" +
                                  echo(label) + "\"");
    }
    return label;
  }

  // `buffer: I`: an index of the scenario's listed buffers.
  int bufferIndex(const Entry& buffer, const std::vector<model::BufferSpec>& listed) const {
    const std::int64_t index = integer(buffer);
    if (index < 0 || static_cast<std::size_t>(index) >= listed.size()) {
      fail(buffer.valueMark(), "'buffer' " + std::to_string(index) +
                                   " is out of range: the scenario lists " +
                                   std::to_string(listed.size()) + " buffer(s) (0.." +
                                   std::to_string(listed.size() - 1) + ")");
    }
    return static_cast<int>(index);
  }

  // buffer-order, buffer-size, buffer-label: what they change must exist and differ from what
  // the list says (a fault that changes nothing is refused, not run as a no-op).
  void parseBufferFault(const std::vector<Entry>& keys, const Entry& site, const Scenario& scenario,
                        Fault& fault) const {
    const std::vector<model::BufferSpec> listed = model::listedBuffers(scenario);
    if (!model::isBufferFault(fault)) {
      // A handshake fault aimed at one buffer: the index must name a listed one (which faults may
      // be aimed, and with what, is the rules': scenario/rules.cc, checkBuffers).
      if (const Entry* buffer = find(keys, "buffer")) fault.onBuffer = bufferIndex(*buffer, listed);
      return;
    }
    if (fault.site == FaultSite::kBufferCount) {
      parseBufferCount(keys, listed.size(), fault);
      return;
    }
    if (fault.site == FaultSite::kBufferOrder) {
      std::vector<model::BufferSpec> reversed(listed.rbegin(), listed.rend());
      bool changes = false;
      for (std::size_t i = 0; i < listed.size(); ++i) {
        changes =
            changes || reversed[i].bytes != listed[i].bytes || reversed[i].label != listed[i].label;
      }
      if (!changes) {
        fail(site.valueMark(),
             "a buffer-order fault reverses the order of 'buffers:', which changes nothing here: "
             "it needs at least two buffers that differ in size or label (" +
                 std::to_string(listed.size()) + " listed)");
      }
      return;
    }
    if (const Entry* buffer = find(keys, "buffer")) fault.buffer = bufferIndex(*buffer, listed);
    const model::BufferSpec& entry = listed[static_cast<std::size_t>(fault.buffer)];
    if (const Entry* size = find(keys, "size")) {
      fault.size = byteSize(*size, "size");
      if (fault.size == entry.bytes) {
        fail(size->valueMark(), "buffer " + std::to_string(fault.buffer) + " is listed with " +
                                    std::to_string(entry.bytes) +
                                    " bytes already: this buffer-size fault changes nothing");
      }
    } else if (fault.site == FaultSite::kBufferSize) {
      fail(fault.mark, "a buffer-size fault needs 'size' (the bytes the rank constructs it with)");
    }
    if (const Entry* label = find(keys, "label")) {
      fault.label = bufferLabel(*label);
      if (fault.label == entry.label) {
        fail(label->valueMark(), "buffer " + std::to_string(fault.buffer) +
                                     " is listed with this label already: this buffer-label "
                                     "fault changes nothing");
      }
    } else if (fault.site == FaultSite::kBufferLabel) {
      fail(fault.mark, "a buffer-label fault needs 'label' (\"\" for none)");
    }
  }

  // buffer-count's `count`: how many buffers the rank registers, 0 or more, not the list's.
  void parseBufferCount(const std::vector<Entry>& keys, std::size_t listed, Fault& fault) const {
    const Entry* count = find(keys, "count");
    if (count == nullptr) {
      fail(fault.mark,
           "a buffer-count fault needs 'count' (how many buffers the rank registers; "
           "the scenario lists " +
               std::to_string(listed) + ")");
    }
    const std::int64_t value = integer(*count);
    if (value < 0 || value > static_cast<std::int64_t>(kMaxBuffers)) {
      fail(count->valueMark(),
           "a buffer-count fault's 'count' is how many buffers its rank "
           "registers, 0.." +
               std::to_string(kMaxBuffers) + ", got " + std::to_string(value));
    }
    if (static_cast<std::size_t>(value) == listed) {
      fail(count->valueMark(), "the scenario lists " + std::to_string(listed) +
                                   " buffer(s) already: this buffer-count fault changes nothing "
                                   "(a no-op)");
    }
    fault.registers = static_cast<std::size_t>(value);
  }

  // A death, hang or exit names a `peer` only inside the open of that peer (`at: open`).
  void checkStopPeer(const std::vector<Entry>& keys, const Fault& fault) const {
    const Entry* peer = find(keys, "peer");
    if (peer == nullptr || !model::stopsRank(fault.site) || fault.at == Point::kOpen) return;
    fail(peer->keyMark(),
         "'peer' on a death, hang or exit names the open of that peer: it is "
         "valid only with 'at: open' (at is " +
             inQuotes(toString(fault.at)) + ")");
  }

  // `step`: the data-plane step at whose start a death, hang or exit at `dataplane` stops its
  // rank; required there and valid nowhere else. Whether the step comes (dataplane.steps) is the
  // rules' (scenario/rules.cc), once the `dataplane:` section is known.
  void parseStopStep(const std::vector<Entry>& keys, Fault& fault) const {
    const Entry* step = find(keys, "step");
    if (fault.at != Point::kDataplane || !model::stopsRank(fault.site)) {
      if (step == nullptr) return;
      fail(step->keyMark(),
           "'step' names a data-plane step: it is valid only with 'at: dataplane' "
           "(at is " +
               inQuotes(toString(fault.at)) + ")");
    }
    if (step == nullptr) {
      fail(fault.mark, "a " + toString(fault.site) +
                           " fault at 'dataplane' needs 'step' (the data-plane step at whose "
                           "start the rank stops, counted from 0)");
    }
    const std::int64_t value = integer(*step);
    if (value < 0 || value > kMaxDataplaneStep) {
      fail(step->valueMark(), "'step' must be an integer from 0 to " +
                                  std::to_string(kMaxDataplaneStep) + ", got " +
                                  std::to_string(value));
    }
    fault.step = static_cast<std::uint64_t>(value);
  }

  // Every key of a fault is one its site takes.
  void checkSiteKeys(const std::vector<Entry>& keys, const model::Traits& traits,
                     const std::string& siteName) const {
    for (const Entry& entry : keys) {
      if (entry.key == "site" || entry.key == "rank" || entry.key == "ranks" ||
          entry.key == "peers") {
        continue;  // `peers` is checked with the set (parsePeerSet)
      }
      const bool allowed = std::any_of(traits.keys.begin(), traits.keys.end(),
                                       [&](auto key) { return model::keyName(key) == entry.key; });
      if (!allowed) {
        std::string takes = "site, rank|ranks";
        for (model::Key key : traits.keys) takes += ", " + std::string(model::keyName(key));
        fail(entry.keyMark(), "key " + inQuotes(entry.key) + " is not valid for site " +
                                  inQuotes(siteName) + " (it takes: " + takes + ")");
      }
    }
  }

  // `rank: R` or `ranks: [R, ...]` (not both, no rank twice).
  void parseFaultRanks(const std::vector<Entry>& keys, Fault& fault, int ranks) const {
    const Entry* rank = find(keys, "rank");
    const Entry* rankList = find(keys, "ranks");
    if (rank != nullptr && rankList != nullptr) {
      const auto position = [](const Entry* e) {
        return std::pair(e->keyMark().line, e->keyMark().column);
      };
      const Entry* second = position(rank) > position(rankList) ? rank : rankList;
      fail(second->keyMark(), "give either 'rank' or 'ranks', not both");
    }
    if (rank == nullptr && rankList == nullptr) {
      fail(fault.mark, "a fault needs 'rank' (one rank) or 'ranks' (a list of ranks)");
    }
    if (rank != nullptr) {
      if (rank->value.IsSequence()) {
        fail(rank->valueMark(), "'rank' takes one rank; use 'ranks' for a list");
      }
      fault.ranks.push_back(rankIn(rank->value, "rank", ranks));
    } else {
      if (!rankList->value.IsSequence() || rankList->value.size() == 0) {
        fail(rankList->valueMark(),
             "'ranks' of a fault must be a non-empty list like [1, 2] "
             "(use 'rank' for one), got " +
                 describe(rankList->value));
      }
      for (const YAML::Node& item : rankList->value) {
        const int value = rankIn(item, "rank", ranks);
        if (std::find(fault.ranks.begin(), fault.ranks.end(), value) != fault.ranks.end()) {
          fail(toMark(item.Mark()), "rank " + std::to_string(value) + " is listed twice");
        }
        fault.ranks.push_back(value);
      }
    }
  }

  // `count` and `probability`: how often the fault fires.
  void parseFaultLimits(const std::vector<Entry>& keys, Fault& fault) const {
    // buffer-count's `count` is how many buffers its rank registers (parseBufferFault).
    const Entry* count = fault.site == FaultSite::kBufferCount ? nullptr : find(keys, "count");
    if (count != nullptr) {
      const std::int64_t value = integer(*count);
      if (value < 1 || value > std::numeric_limits<int>::max()) {
        fail(count->valueMark(), "'count' must be at least 1 (leave it out for no limit), got " +
                                     std::to_string(value));
      }
      fault.count = static_cast<int>(value);
    }
    if (const Entry* probability = find(keys, "probability")) {
      std::optional<double> value;
      if (isPlainScalar(probability->value)) {
        value = parseNumber(probability->value.Scalar());
      }
      if (!value) {
        fail(probability->valueMark(),
             "'probability' must be a number, got " + describe(probability->value));
      }
      if (!(*value > 0.0 && *value <= 1.0)) {
        fail(probability->valueMark(),
             "'probability' must be in (0, 1], got " + echo(probability->value.Scalar()));
      }
      fault.probability = *value;
    }
  }

  // `at`: one of the points the fault's site takes (said with why when it takes fewer than all).
  void parseFaultAt(const std::vector<Entry>& keys, const model::Traits& traits, int ranks,
                    Fault& fault) const {
    const std::string siteName = toString(fault.site);
    const Entry* at = find(keys, "at");
    const std::vector<std::string_view> points = pointNames(traits.points);
    const bool everyPoint = traits.points.size() == faults::allPoints().size();
    if (at == nullptr && model::mustGive(fault.site, model::Key::kAt)) {
      fail(fault.mark, "a " + siteName + " fault needs 'at' (" +
                           (everyPoint ? "one of " + joined(points) : joined(points, " or ")) +
                           ")");
    }
    if (at != nullptr && !everyPoint) {
      // A point that exists but that this site does not take: say which it takes, and why.
      const std::string point = string(*at);
      if (faults::pointFromName(point) &&
          std::find(points.begin(), points.end(), point) == points.end()) {
        std::string which;
        for (std::size_t i = 0; i < points.size(); ++i) {
          which += std::string(i == 0                   ? ""
                               : i + 1 == points.size() ? " or "
                                                        : ", ") +
                   "'" + std::string(points[i]) + "'";
        }
        fail(at->valueMark(), "a " + siteName + " fault happens at " + which + " (" +
                                  std::string(traits.pointsWhy) + "), got " + inQuotes(point));
      }
    }
    if (at != nullptr) fault.at = traits.points[choice(*at, points, "point")];
    const bool peerPoint = fault.at != Point::kBeforeConstruct && fault.at != Point::kClose &&
                           fault.at != Point::kAlloc;
    if (ranks == 1 && fault.at == Point::kDataplane) {
      fail(at->valueMark(),
           "point 'dataplane' never happens with 1 rank: the data plane needs at "
           "least 2 ranks");
    }
    if (ranks == 1 && peerPoint) {
      fail(at->valueMark(), "point " + inQuotes(toString(fault.at)) +
                                " never happens with 1 rank: a single rank exports no handle and "
                                "has no exchange, no peer to open and no agreement");
    }
  }

  int hipError(const Entry& entry) const {
    const YAML::Node& value = entry.value;
    if (!value.IsScalar()) {
      fail(entry.valueMark(),
           "'error' must be a hipError_t name or a positive number, got " + describe(value));
    }
    if (std::optional<std::int64_t> number = parseInteger(value.Scalar())) {
      if (*number == 0) fail(entry.valueMark(), "'error' 0 is hipSuccess, which is not an error");
      if (*number < 0 || *number > std::numeric_limits<int>::max()) {
        fail(entry.valueMark(),
             "'error' must be a positive hipError_t number, got " + std::to_string(*number));
      }
      return static_cast<int>(*number);
    }
    if (value.Scalar() == "hipSuccess") {
      fail(entry.valueMark(), "'error' hipSuccess is not an error");
    }
    if (std::optional<int> code = hipErrorCode(value.Scalar())) return *code;
    fail(entry.valueMark(), "unknown hipError_t name " + inQuotes(value.Scalar()) + "; " +
                                suggestion(value.Scalar(), hipErrorNames()) +
                                " (or give the number)");
  }

  MessageExpectation message(const Entry& entry) const {
    MessageExpectation out;
    if (entry.value.IsMap()) {
      const std::vector<Entry> keys = entries(entry.value, "a message", entry.valueMark());
      checkKnown(keys, kTextKey, "a message");
      const Entry* text = find(keys, "text");
      if (text == nullptr) fail(entry.valueMark(), "a message mapping needs 'text'");
      out.kind = MessageKind::kText;
      out.text = string(*text);
      if (out.text.empty()) fail(text->valueMark(), "'text' must not be empty");
      return out;
    }
    if (!entry.value.IsScalar()) {
      fail(entry.valueMark(),
           "a message must be this, another, group, ok or {text: \"...\"}, got " +
               describe(entry.value));
    }
    // this, another, group, ok: a text is written as {text: ...}.
    static constexpr auto kKinds = kMessageKindNames.names();
    out.kind = kMessageKindNames.value(choice(entry, std::span(kKinds).first(4), "message"));
    return out;
  }

  scenario::ExpectMarks parseExpect(const Entry& expectEntry, Scenario& scenario) const {
    scenario::ExpectMarks marks;
    marks.expect = expectEntry.valueMark();
    const std::vector<Entry> keys = entries(expectEntry.value, "'expect'", marks.expect);
    checkKnown(keys, kExpectKeys, "'expect'");
    Expectation& expect = scenario.expect;

    const Entry* outcome = find(keys, "outcome");
    if (outcome == nullptr) {
      fail(marks.expect,
           "missing required key 'expect.outcome' (success, raise, reported or as-drawn)");
    }
    static constexpr auto kOutcomes = kOutcomeNames.names();
    static constexpr std::array<std::string_view, kOutcomes.size() + 1> kChoices{
        kOutcomes[0], kOutcomes[1], kOutcomes[2], model::kAsDrawn};
    const std::size_t chosen = choice(*outcome, kChoices, "outcome");
    expect.asDrawn = chosen == kOutcomes.size();
    // As drawn: raise until the judge takes the run's draw (model::Expectation::asDrawn).
    expect.outcome = expect.asDrawn ? model::Outcome::kRaise : kOutcomeNames.value(chosen);
    marks.outcome = outcome->valueMark();
    expect.marks.outcome = marks.outcome;

    if (const Entry* messages = find(keys, "messages")) parseMessages(*messages, scenario, marks);

    if (const Entry* reported = find(keys, "reported")) parseReported(*reported, scenario, marks);

    if (const Entry* within = find(keys, "within")) {
      marks.withinGiven = true;
      marks.within = within->valueMark();
      expect.within = duration(*within);
    }

    if (const Entry* violations = find(keys, "violations")) parseViolations(*violations, expect);
    if (const Entry* judge = find(keys, "judge")) parseJudge(*judge, scenario);
    return marks;
  }

  // `messages`: a message for each rank given by number, and `others` for the rest.
  void parseMessages(const Entry& messages, Scenario& scenario, ExpectMarks& marks) const {
    Expectation& expect = scenario.expect;
    marks.messagesGiven = true;
    marks.messages = messages.keyMark();
    const std::vector<Entry> list = entries(messages.value, "'messages'", messages.valueMark());
    for (const Entry& entry : list) {
      if (entry.key == "others") {
        expect.others = message(entry);
        expect.marks.others = entry.keyMark();
        continue;
      }
      std::optional<std::int64_t> rank;
      if (isPlainScalar(entry.keyNode)) rank = parseInteger(entry.key);
      if (!rank) {
        const std::array<std::string_view, 1> others{"others"};
        std::string hint = closest(entry.key, others) ? "; did you mean 'others'?" : "";
        fail(entry.keyMark(), "a key of 'messages' must be a rank number or 'others', got " +
                                  inQuotes(entry.key) + hint);
      }
      if (*rank < 0 || *rank >= scenario.ranks) {
        fail(entry.keyMark(), "messages for rank " + std::to_string(*rank) +
                                  ", which is out of range: " + rangeText(scenario.ranks));
      }
      if (marks.messageRanks.count(static_cast<int>(*rank)) != 0) {
        fail(entry.keyMark(), "messages for rank " + std::to_string(*rank) + " are given twice");
      }
      expect.messages[static_cast<int>(*rank)] = message(entry);
      marks.messageRanks[static_cast<int>(*rank)] = entry.keyMark();
      expect.marks.messages[static_cast<int>(*rank)] = entry.keyMark();
    }
  }

  // `reported`: the ranks that go missing, each once.
  void parseReported(const Entry& reported, Scenario& scenario, ExpectMarks& marks) const {
    Expectation& expect = scenario.expect;
    marks.reportedGiven = true;
    marks.reported = reported.valueMark();
    expect.marks.reported = marks.reported;
    if (!reported.value.IsSequence()) {
      fail(reported.valueMark(),
           "'reported' must be a list of ranks like [3], got " + describe(reported.value));
    }
    for (const YAML::Node& item : reported.value) {
      const int rank = rankIn(item, "reported rank", scenario.ranks);
      if (std::find(expect.reported.begin(), expect.reported.end(), rank) !=
          expect.reported.end()) {
        fail(toMark(item.Mark()), "rank " + std::to_string(rank) + " is listed twice");
      }
      expect.reported.push_back(rank);
    }
  }

  // `violations`: the list of a negative control's findings.
  void parseViolations(const Entry& violations, Expectation& expect) const {
    if (!violations.value.IsSequence()) {
      fail(violations.valueMark(),
           "'violations' must be a list like [{property: C6, finding: \"...\"}], got " +
               describe(violations.value));
    }
    for (const YAML::Node& item : violations.value) parseViolation(item, expect);
    if (!expect.findings.empty() &&
        std::all_of(expect.findings.begin(), expect.findings.end(),
                    [](const model::ExpectedFinding& f) { return f.may; })) {
      fail(violations.valueMark(),
           "a negative control needs at least one finding that must appear (appear: must, the "
           "default); 'appear: may' is for the knock-ons of one that must");
    }
  }

  // One violation: `{property: C1..C8, finding: "..."}`, each property once.
  void parseViolation(const YAML::Node& item, Expectation& expect) const {
    const Mark mark = toMark(item.Mark());
    if (item.IsScalar()) {
      // The bare form passed whenever the property failed, for any reason: a regression that
      // changes why a control fails went unseen.
      fail(mark,
           "a violation names its property and the finding it must produce: "
           "{property: " +
               item.Scalar() +
               ", finding: \"...\"} (a bare property would pass when it fails for "
               "any reason)");
    }
    const std::vector<Entry> fields = entries(item, "a violation", mark);
    checkKnown(fields, kViolationKeys, "a violation");
    const Entry* property = find(fields, "property");
    const Entry* finding = find(fields, "finding");
    if (property == nullptr) fail(mark, "a violation needs 'property' (C1..C8)");
    if (finding == nullptr) {
      fail(mark, "a violation needs 'finding': a fragment of the message its checker must report");
    }
    const std::string name = string(*property);
    if (!kPropertyNames.find(std::string_view(name))) {
      fail(property->valueMark(),
           "unknown property " + inQuotes(name) + " in 'violations' (expected C1..C8)");
    }
    if (std::find(expect.violations.begin(), expect.violations.end(), name) !=
        expect.violations.end()) {
      fail(property->valueMark(), "property " + name + " is listed twice");
    }
    const std::string text = string(*finding);
    if (text.empty()) fail(finding->valueMark(), "'finding' must not be empty");
    bool may = false;
    if (const Entry* appear = find(fields, "appear")) {
      const std::string how = string(*appear);
      if (how != "must" && how != "may") {
        fail(appear->valueMark(), "'appear' must be must or may, got " + inQuotes(how));
      }
      may = how == "may";
    }
    expect.violations.push_back(name);
    expect.findings.push_back({name, text, mark, may});
  }

  // `judge`: the refusals of a control of the judge, each a rule the run can reach.
  void parseJudge(const Entry& judge, Scenario& scenario) const {
    if (!judge.value.IsSequence()) {
      fail(judge.valueMark(),
           "'judge' must be a list like [{rule: coverage, finding: \"...\"}], got " +
               describe(judge.value));
    }
    if (judge.value.size() == 0) {
      fail(judge.valueMark(), "'judge' lists no refusal (leave the key out for a plain scenario)");
    }
    for (const YAML::Node& item : judge.value) parseRefusal(item, scenario);
  }

  // One refusal: `{rule: NAME, finding: "..."}`, each rule once, and one the file can make the
  // judge reach (a rule that cannot fire would leave the control failing for ever, or, blinded,
  // unguarded).
  void parseRefusal(const YAML::Node& item, Scenario& scenario) const {
    const Mark mark = toMark(item.Mark());
    if (!item.IsMap()) {
      fail(mark,
           "a judge refusal names the rule and the finding it must produce: {rule: "
           "coverage, finding: \"...\"}, got " +
               describe(item));
    }
    const std::vector<Entry> fields = entries(item, "a judge refusal", mark);
    checkKnown(fields, kRefusalKeys, "a judge refusal");
    const Entry* rule = find(fields, "rule");
    const Entry* finding = find(fields, "finding");
    if (rule == nullptr) fail(mark, "a judge refusal needs 'rule' (" + ruleList() + ")");
    if (finding == nullptr) {
      fail(mark,
           "a judge refusal needs 'finding': a fragment of the failure the judge must report");
    }
    const std::string name = string(*rule);
    if (std::find(model::kJudgeRules.begin(), model::kJudgeRules.end(), name) ==
        model::kJudgeRules.end()) {
      const auto near = closest(name, model::kJudgeRules);
      fail(rule->valueMark(), "unknown rule " + inQuotes(name) + " in 'judge' (expected " +
                                  ruleList() + ")" +
                                  (near ? "; did you mean " + inQuotes(*near) + "?" : ""));
    }
    Expectation& expect = scenario.expect;
    for (const model::JudgeRefusal& other : expect.refusals) {
      if (other.rule == name) fail(rule->valueMark(), "rule " + name + " is listed twice");
    }
    const std::string text = string(*finding);
    if (text.empty()) fail(finding->valueMark(), "'finding' must not be empty");
    if (const std::string why = unreachableRule(name, scenario); !why.empty()) {
      fail(rule->valueMark(), "the judge can never refuse this run for " + name + ": " + why);
    }
    expect.refusals.push_back({name, text, mark});
  }

  static std::string ruleList() {
    std::string out;
    for (std::size_t i = 0; i < 4; ++i) out += std::string(model::kJudgeRules[i]) + ", ";
    return out + "C1..C8";
  }

  // Why the judge can never refuse a run of `scenario` for `rule` (empty: it can).
  static std::string unreachableRule(const std::string& rule, const Scenario& scenario) {
    const auto& faults = scenario.faults;
    const auto& violations = scenario.expect.violations;
    if (rule == "coverage") {
      const bool certain = std::any_of(faults.begin(), faults.end(),
                                       [](const Fault& f) { return f.probability >= 1.0; });
      return certain ? "" : "no fault is certain (probability 1), and only those are required";
    }
    if (rule == "named-finding" || rule == "control") {
      return violations.empty() ? "no negative control is listed in 'violations'" : "";
    }
    if (rule == "fault-without-effect") {
      const bool handle = std::any_of(faults.begin(), faults.end(),
                                      [](const Fault& f) { return model::isHandleFault(f.site); });
      return handle ? ""
                    : "no handle-stale, handle-corrupt, handle-aliased or handle-mapped fault is "
                      "planted";
    }
    if (std::find(violations.begin(), violations.end(), rule) != violations.end()) {
      return rule +
             " is listed in 'violations': a negative control's failure is the judge's "
             "named-finding or control, never " +
             rule;
    }
    return "";
  }
};

}  // namespace

Scenario parseScenario(const std::string& text, const std::string& file) {
  return Parser(file).parse(text);
}

}  // namespace peerconf::harness::scenario
