// HTML report: the page is built as text; everything that comes from a scenario file, a runtime
// or a checker goes through htmlEscape.
#include "reports/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "judge/judgement.h"
#include "model/text.h"

namespace peerconf::harness::reports {

using judge::Failure;
using judge::formatDuration;
using judge::Judgement;
using judge::rankWord;
using model::escapeMarkup;
using model::Event;
using model::EventKind;
using model::Expectation;
using model::ExpectedFinding;
using model::Fault;
using model::FaultSite;
using model::Finding;
using model::formatNs;
using model::hipErrorName;
using model::markupEntity;
using model::RankResult;
using model::RankStatus;
using model::reproduceCommand;
using model::RunRecord;
using model::Scenario;
using model::toString;
using model::Verdict;

namespace {

// The stylesheet, the shared SVG definitions (markers, hatch) and the script: inline, so the
// page needs nothing but itself.
constexpr const char* kStyle = R"css(
:root{--pass:#1a7f37;--fail:#cf222e;--skip:#6e7781;--fault:#d62728;--raise:#e8590c;--timeout:#8250df}
body{margin:0 auto;max-width:1200px;padding:0 1em 2em;color:#1f2328;background:#fff;font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif}
h1{font-size:1.5em;margin:.6em 0 .2em}h2{font-size:1.15em;margin:.8em 0 .3em}h4{margin:.5em 0 .2em}
.meta{color:#57606a;font-size:.85em;word-break:break-all;margin:.1em 0}
.counts span{display:inline-block;padding:.15em .7em;border-radius:1em;margin-right:.4em;color:#fff;font-weight:600}
.cp{background:var(--pass)}.cf{background:var(--fail)}.cs{background:var(--skip)}
.site{font-family:ui-monospace,monospace;background:#eef1f8;padding:0 .3em;border-radius:3px;margin-right:.3em}
#bar{position:sticky;top:0;background:#fff;padding:.5em 0;border-bottom:1px solid #d0d7de;z-index:1;display:flex;gap:.5em;align-items:center;flex-wrap:wrap}
#bar input{flex:1;min-width:12em;padding:.25em .4em}
details.sc{border:1px solid #d0d7de;border-left:6px solid var(--pass);border-radius:4px;margin:.4em 0;content-visibility:auto;contain-intrinsic-size:auto 2.2em}
details.sc.fail{border-left-color:var(--fail)}
summary{cursor:pointer;padding:.3em .6em}
.b{font-weight:700;font-family:ui-monospace,monospace}.pass .b{color:var(--pass)}.fail .b{color:var(--fail)}
.nm{font-weight:600;word-break:break-all}.dim{color:#57606a;font-size:.9em}.why{color:var(--fail)}.ctl{color:#9a6700;font-size:.9em}
.body{padding:.1em .8em .8em}
.fails{background:#fff5f5;border:1px solid #ffcecb;border-radius:4px;padding:.1em .8em;margin:.4em 0}
table{border-collapse:collapse;margin:.4em 0;font-size:.92em}
td,th{border:1px solid #d0d7de;padding:.15em .45em;text-align:left;vertical-align:top}
th{background:#f6f8fa}td ul,.fails ul{margin:.1em 0;padding-left:1.3em}
.v-pass{color:var(--pass)}.v-fail{color:var(--fail);font-weight:600}.v-na{color:#8c959f}.v-xf{color:#9a6700}
.repro{display:flex;gap:.5em;align-items:flex-start;margin:.5em 0}
.repro code{flex:1;background:#f6f8fa;border:1px solid #d0d7de;padding:.3em .5em;border-radius:4px;white-space:pre-wrap;word-break:break-all}
svg.lanes{width:100%;max-width:1100px;height:auto;display:block;margin-top:.4em}
svg text{font:10px system-ui,sans-serif;fill:#1f2328}text.tk{text-anchor:middle}
.ln{stroke:#f6f8fa;stroke-width:20;fill:none}.ax{stroke:#8c959f;stroke-width:.6}
[class^=p-]{stroke:#e4e7eb;stroke-width:18;fill:none}.p-construct{stroke:#d6e6f7}.p-check{stroke:#dcefd7}.p-close{stroke:#fbe5c8}.p-destroy{stroke:#eadff7}.p-exchange,.p-open,.p-agree{stroke:#b9d3ee}
.sm{stroke:#4a6785;stroke-width:4;fill:none}
.o-ok{fill:var(--pass)}.o-raised{fill:var(--raise)}.o-dead{fill:#000}.o-hung{fill:var(--timeout)}.o-missing{fill:#8c959f}
.stop{stroke:url(#pc-hatch);stroke-width:18;fill:none}
.vl{stroke-width:2}.vl.pass{stroke:var(--pass)}.vl.fail{stroke:var(--fail)}
text.vt{font-weight:700}text.vt.pass{fill:var(--pass)}text.vt.fail{fill:var(--fail)}
#legend svg{max-width:800px}
)css";

constexpr const char* kDefs =
    R"svg(<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>)svg"
    R"svg(<g id="pc-fault"><path d="M0-5 5 0 0 5-5 0z" fill="#d62728" stroke="#fff" stroke-width=".8"/></g>)svg"
    R"svg(<g id="pc-raise"><path d="M-4-4 4 4M-4 4 4-4" stroke="#e8590c" stroke-width="2.2"/></g>)svg"
    R"svg(<g id="pc-timeout"><path d="M-4-5h8L-4 5h8z" fill="#8250df" stroke="#fff" stroke-width=".6"/></g>)svg"
    R"svg(<pattern id="pc-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f6f8fa"/><path d="M0 0v6" stroke="#8c959f" stroke-width="2"/></pattern>)svg"
    R"svg(</defs></svg>)svg";

constexpr const char* kScript = R"js(
(function(){
var q=document.getElementById('filter'),st=document.getElementById('status'),shown=document.getElementById('shown');
var items=[].slice.call(document.querySelectorAll('details.sc'));
var keys=items.map(function(d){return d.querySelector('.nm').textContent.toLowerCase()+'\n'+(d.querySelector('.file')||{textContent:''}).textContent.toLowerCase();});
function apply(){var t=q.value.toLowerCase(),s=st.value,n=0;
items.forEach(function(d,i){var ok=(!s||d.dataset.status===s)&&(!t||keys[i].indexOf(t)>=0);d.hidden=!ok;if(ok)n++;});
shown.textContent=n+' of '+items.length+' shown';}
function openAll(how){items.forEach(function(d){if(!d.hidden)d.open=how==='all'||(how==='fail'&&d.dataset.status==='fail');});}
q.addEventListener('input',apply);st.addEventListener('change',apply);
document.getElementById('expand').addEventListener('click',function(){openAll('all');});
document.getElementById('collapse').addEventListener('click',function(){openAll('none');});
var p=new URLSearchParams(location.search);
if(p.get('q'))q.value=p.get('q');
if(p.get('status'))st.value=p.get('status');
apply();
if(p.get('open'))openAll(p.get('open'));
function reveal(){var id=decodeURIComponent(location.hash.slice(1)),d=id&&document.getElementById(id);
if(d&&d.tagName==='DETAILS'){d.hidden=false;d.open=true;d.scrollIntoView();}}
window.addEventListener('hashchange',reveal);reveal();
document.addEventListener('click',function(e){var b=e.target.closest('button.copy');if(!b)return;
var c=document.getElementById(b.dataset.for),text=c.textContent;
function done(){b.textContent='copied';setTimeout(function(){b.textContent='copy';},1500);}
function fallback(){var r=document.createRange();r.selectNodeContents(c);var s=getSelection();s.removeAllRanges();s.addRange(r);
try{document.execCommand('copy');done();}catch(x){b.textContent='select and copy';}}
if(navigator.clipboard&&navigator.clipboard.writeText)navigator.clipboard.writeText(text).then(done,fallback);else fallback();});
function loaded(){document.body.dataset.loadMs=Math.round(performance.now());}
if(document.readyState==='complete')loaded();else window.addEventListener('load',loaded);
})();
)js";

bool allowedInHtml(std::uint32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return true;
  if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return false;
  if (c >= 0xD800 && c <= 0xDFFF) return false;
  return (c & 0xFFFE) != 0xFFFE && !(c >= 0xFDD0 && c <= 0xFDEF);
}

// SVG coordinates: whole units (the picture is 960 wide; a suite of a thousand runs stays small).
std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", value);
  return text;
}

std::string displayName(const RunRecord& record) {
  return record.scenario.name.empty() ? record.scenario.file : record.scenario.name;
}

bool timedOut(const std::string& message) {
  return message.find("deadline") != std::string::npos ||
         message.find("timed out after") != std::string::npos;
}

// The verdict column's word and class.
std::pair<const char*, const char*> verdictWord(const Verdict& verdict) {
  if (verdict.acceptable()) {
    if (verdict.expectedViolation) return {"failed as expected", "v-xf"};
    if (verdict.mayFail && verdict.failed()) return {"failed as it may", "v-xf"};
    return verdict.status == Verdict::Status::kPass ? std::pair{"pass", "v-pass"}
                                                    : std::pair{"n/a", "v-na"};
  }
  if (verdict.expectedViolation) {
    return {verdict.status == Verdict::Status::kPass ? "passed (expected to fail)"
                                                     : "n/a (expected to fail)",
            "v-fail"};
  }
  return {"FAIL", "v-fail"};
}

void findingsList(std::string& out, const std::vector<Finding>& findings) {
  if (findings.empty()) return;
  out += "<ul>";
  for (const Finding& finding : findings) {
    out += "<li>";
    if (finding.rank >= 0) out += "rank " + std::to_string(finding.rank) + ": ";
    out += htmlEscape(finding.text);
    out += "</li>";
  }
  out += "</ul>";
}

// Swimlane geometry (SVG user units).
constexpr double kWidth = 960;
constexpr double kLeft = 58;
constexpr double kRight = 770;  // the time axis ends here; outcome labels follow
constexpr double kTop = 20;
constexpr double kLane = 22;

constexpr std::size_t kExpandedFailures = 20;

struct Span {
  const Event* begin;
  std::int64_t endNs;
  bool threw;
};

}  // namespace

std::string htmlEscape(std::string_view text) {
  return escapeMarkup(
      text,
      [](std::uint32_t c) -> const char* {
        if (c == '"') return "&quot;";
        if (c == '\'') return "&#39;";
        return markupEntity(c);
      },
      allowedInHtml);
}

namespace {

// The swimlane's time axis: event times onto the picture's x, in SVG units.
class TimeAxis {
 public:
  explicit TimeAxis(std::int64_t endNs) : endNs_(endNs) {}
  std::int64_t endNs() const { return endNs_; }
  double scale(std::int64_t ns) const {
    return static_cast<double>(std::clamp<std::int64_t>(ns, 0, endNs_)) /
           static_cast<double>(endNs_) * (kRight - kLeft);
  }
  std::string x(std::int64_t ns) const { return number(kLeft + scale(ns)); }
  // At least one unit wide, so that a short call still shows.
  std::string width(std::int64_t fromNs, std::int64_t toNs) const {
    return number(std::max(1.0, scale(toNs) - scale(fromNs)));
  }

 private:
  std::int64_t endNs_;
};

// The events' axis ends at the run's end or its last event: on simulated time virtual, so the
// real wall time does not stretch it.
std::int64_t swimlaneEnd(const RunRecord& record, std::int64_t runEndNs) {
  std::int64_t endNs = std::max<std::int64_t>(runEndNs, 1);
  for (const RankResult& rank : record.ranks) {
    endNs = std::max(endNs, rank.endNs);
    for (const Event& event : rank.events) endNs = std::max(endNs, event.tNs);
  }
  return endNs;
}

}  // namespace

std::int64_t tickStep(std::int64_t endNs) {
  // The smallest 1, 2 or 5 times a power of ten (in ns) that covers the axis in four steps.
  std::int64_t step = 1;
  for (std::int64_t decade = 1;; decade *= 10) {
    for (std::int64_t m : {1, 2, 5}) {
      step = m * decade;
      if (step * 4 >= endNs) return step;
    }
  }
}

std::string tickLabel(std::int64_t ns, std::int64_t step) {
  // As many decimals as the step has: every tick is a multiple of it, so two ticks never read
  // the same (formatDuration's 0.1 ms or 1 ms would round 0.05 ms steps onto each other).
  const bool seconds = step >= 1'000'000'000;
  const double unit = seconds ? 1e9 : 1e6;
  int decimals = 0;
  for (double s = static_cast<double>(step) / unit; s < 1.0 - 1e-9 && decimals < 6; s *= 10) {
    ++decimals;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.*f %s", decimals, static_cast<double>(ns) / unit,
                seconds ? "s" : "ms");
  return text;
}

namespace {

// The time axis: a line, ticks at a round step whose labels all differ, and which clock the
// times are on (simulated: virtual time drawn from the seed; wall: measured).
std::string timeTicks(const TimeAxis& axis, bool simulated) {
  std::string out = "<path class=\"ax\" d=\"M" + number(kLeft) + " 14H" + number(kRight) + "\"/>";
  out += "<text class=\"tk ck\" x=\"" + number(kLeft - 6) + "\" y=\"10\" text-anchor=\"end\">" +
         std::string(simulated ? "sim time" : "wall time") + "</text>";
  const std::int64_t step = tickStep(axis.endNs());
  for (std::int64_t ns = 0; ns <= axis.endNs(); ns += step) {
    // The last label ends at the axis's end rather than running past it.
    const bool last = ns + step > axis.endNs() && ns > 0 && axis.endNs() - ns < step / 2;
    out += "<text class=\"tk\" x=\"" + axis.x(ns) + "\" y=\"10\"" +
           (ns == 0 ? " text-anchor=\"start\""
            : last  ? " text-anchor=\"end\""
                    : "") +
           ">" + tickLabel(ns, step) + "</text>";
  }
  return out;
}

// One rank's phases and seam calls, each begin paired with its end.
struct LaneSpans {
  std::vector<Span> phases;
  std::vector<Span> calls;
  std::int64_t lastNs = 0;  // the rank's end or its last event
  std::int64_t stopNs = 0;  // where a stopped rank stopped
};

LaneSpans laneSpans(const RankResult& rank, bool stopped) {
  // Pair begins with ends (the innermost open one of the same name); what never ended ends
  // where the rank stopped.
  LaneSpans spans;
  std::vector<std::pair<const Event*, bool>> open;  // begin, phase
  spans.lastNs = rank.endNs;
  // Where a dead or hung rank stopped: its death or hang fault, else the last thing it did
  // (its outcome, and the releases after a death, are the harness's).
  std::int64_t activeNs = 0;
  std::int64_t stopNs = -1;
  for (const Event& event : rank.events) {
    spans.lastNs = std::max(spans.lastNs, event.tNs);
    if (event.kind != EventKind::kOutcome) activeNs = std::max(activeNs, event.tNs);
    if (event.kind == EventKind::kFault && (event.what == "death" || event.what == "hang")) {
      stopNs = event.tNs;
    }
    const bool phase = event.kind == EventKind::kPhaseBegin || event.kind == EventKind::kPhaseEnd;
    switch (event.kind) {
      case EventKind::kCall:
      case EventKind::kPhaseBegin:
        open.emplace_back(&event, phase);
        break;
      case EventKind::kReturn:
      case EventKind::kThrow:
      case EventKind::kPhaseEnd:
        for (std::size_t i = open.size(); i-- > 0;) {
          if (open[i].second != phase || open[i].first->what != event.what) continue;
          (phase ? spans.phases : spans.calls)
              .push_back({open[i].first, event.tNs, event.kind == EventKind::kThrow});
          open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
        break;
      case EventKind::kFault:
      case EventKind::kOutcome:
        break;
    }
  }
  // What a stopped rank had open ends where it stopped.
  spans.stopNs = stopNs < 0 ? activeNs : stopNs;
  const std::int64_t rankEnd = stopped ? spans.stopNs : spans.lastNs;
  for (const auto& [begin, phase] : open) {
    (phase ? spans.phases : spans.calls).push_back({begin, rankEnd, false});
  }
  return spans;
}

// Seam calls as one thin path: in whole units, sorted, and calls that touch or overlap at that
// scale merged into one bar; each bar placed relative to the end of the one before ("m3 0h1").
std::string callBars(const std::vector<Span>& calls, const TimeAxis& axis, double top) {
  std::vector<std::pair<long, long>> bars;  // [from, to)
  for (const Span& call : calls) {
    const long from = std::lround(kLeft + axis.scale(call.begin->tNs));
    bars.emplace_back(from, std::max(from + 1, std::lround(kLeft + axis.scale(call.endNs))));
  }
  std::sort(bars.begin(), bars.end());
  std::vector<std::pair<long, long>> merged;
  for (const auto& [from, to] : bars) {
    if (!merged.empty() && from <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, to);
    } else {
      merged.emplace_back(from, to);
    }
  }
  std::string out = "<path class=\"sm\" d=\"";
  long at = 0;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    const auto [from, to] = merged[i];
    out += i == 0 ? "M" + std::to_string(from) + " " + number(top + 14)
                  : "m" + std::to_string(from - at) + " 0";
    out += "h" + std::to_string(to - from);
    at = to;
  }
  return out + "\"/>";
}

// Phases as wide strokes (outer ones first, so nested ones show on top), seam calls as thin
// ones in one path; one tooltip for the lane tells the phases' durations (a suite of a
// thousand runs stays small).
std::string laneStrokes(const RankResult& rank, LaneSpans& spans, const TimeAxis& axis, double top,
                        const std::string& y) {
  std::vector<Span>& phases = spans.phases;
  std::sort(phases.begin(), phases.end(), [](const Span& a, const Span& b) {
    if (a.begin->tNs != b.begin->tNs) return a.begin->tNs < b.begin->tNs;
    return a.endNs - a.begin->tNs > b.endNs - b.begin->tNs;
  });
  std::string out = "<g><title>rank " + std::to_string(rank.rank);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    out += (i == 0 ? ": " : ", ") + htmlEscape(phases[i].begin->what) + " " +
           formatDuration(phases[i].endNs - phases[i].begin->tNs);
  }
  out += "; " + std::to_string(spans.calls.size()) +
         (spans.calls.size() == 1 ? " seam call" : " seam calls") + "</title>";
  for (const Span& span : phases) {
    out += "<path class=\"p-" + htmlEscape(span.begin->what) + "\" d=\"M" +
           axis.x(span.begin->tNs) + " " + y + "h" + axis.width(span.begin->tNs, span.endNs) +
           "\"/>";
  }
  if (!spans.calls.empty()) out += callBars(spans.calls, axis, top);
  return out + "</g>";
}

// A rank's faults and raises, drawn over every lane's outcome.
std::string laneMarkers(const RankResult& rank, const TimeAxis& axis, const std::string& y) {
  std::string markers;
  for (const Event& event : rank.events) {
    if (event.kind == EventKind::kFault) {
      markers += "<g><title>fault: " + htmlEscape(event.what) +
                 (event.detail.empty() ? "" : " — " + htmlEscape(event.detail)) +
                 "</title><use href=\"#pc-fault\" x=\"" + axis.x(event.tNs) + "\" y=\"" + y +
                 "\"/></g>";
    } else if (event.kind == EventKind::kThrow) {
      const bool timeout = timedOut(event.detail);
      markers += std::string("<g><title>") + (timeout ? "timeout" : "raised") + " in " +
                 htmlEscape(event.what) + ": " + htmlEscape(event.detail) +
                 "</title><use href=\"#pc-" + (timeout ? "timeout" : "raise") + "\" x=\"" +
                 axis.x(event.tNs) + "\" y=\"" + y + "\"/></g>";
    }
  }
  return markers;
}

// What a rank's outcome says beside its lane.
std::string outcomeLabel(const RankResult& rank) {
  std::string label = toString(rank.status);
  if (rank.status == RankStatus::kRaised && !rank.errorType.empty()) {
    label += " " + rank.errorType;
    if (rank.errorType == "HandshakeError") label += rank.thisRank ? " (this)" : " (another)";
  }
  return label;
}

// One rank's lane; its outcome dot and its markers go to `outcomes` and `markers`, drawn later
// over every lane.
std::string rankLane(const RankResult& rank, std::size_t lane, const TimeAxis& axis,
                     std::string& outcomes, std::string& markers) {
  const double top = kTop + kLane * static_cast<double>(lane);
  std::string out =
      "<text x=\"4\" y=\"" + number(top + 14) + "\">rank " + std::to_string(rank.rank) + "</text>";
  const bool stopped = stoppedByFault(rank.status) || rank.status == RankStatus::kMissing;
  LaneSpans spans = laneSpans(rank, stopped);
  const std::string y = number(top + kLane / 2 - 1);
  // A stopped rank: hatching from where it stopped to the run's end.
  if (stopped) {
    out += "<path class=\"stop\" d=\"M" + axis.x(spans.stopNs) + " " + y + "h" +
           axis.width(spans.stopNs, axis.endNs()) + "\"><title>rank " + std::to_string(rank.rank) +
           " " + toString(rank.status) + " from here on</title></path>";
  }
  out += laneStrokes(rank, spans, axis, top, y);
  markers += laneMarkers(rank, axis, y);
  // The outcome: a dot where the rank ended, and what it said.
  const std::string label = outcomeLabel(rank);
  const std::string end = axis.x(spans.lastNs);  // a stopped rank too: where it was reported
  // (The rank's message is in the ranks table.)
  outcomes += "<circle class=\"o-" + toString(rank.status) + "\" cx=\"" + end + "\" cy=\"" + y +
              "\" r=\"4\"/>";
  return out + "<text x=\"" + number(kRight + 8) + "\" y=\"" + number(top + 14) + "\">" +
         htmlEscape(label.size() > 40 ? label.substr(0, 40) : label) + "</text>";
}

}  // namespace

std::string swimlaneSvg(const RunRecord& record, const std::string& verdict, bool failed) {
  const std::int64_t runEndNs = record.timelineNs();
  const TimeAxis axis(swimlaneEnd(record, runEndNs));
  const double height = kTop + kLane * static_cast<double>(record.ranks.size()) + 4;
  std::string out =
      "<svg class=\"lanes\" viewBox=\"0 0 " + number(kWidth) + " " + number(height) + "\">";
  out += timeTicks(axis, record.simulatedTime());
  std::string outcomes;  // drawn over every lane
  std::string markers;   // and these over the outcomes
  // The lanes' background: one wide stroke each.
  out += "<path class=\"ln\" d=\"";
  for (std::size_t lane = 0; lane < record.ranks.size(); ++lane) {
    out += "M" + number(kLeft) + " " +
           number(kTop + kLane * static_cast<double>(lane) + kLane / 2 - 1) + "H" + number(kRight);
  }
  out += "\"/>";
  for (std::size_t lane = 0; lane < record.ranks.size(); ++lane) {
    out += rankLane(record.ranks[lane], lane, axis, outcomes, markers);
  }
  out += outcomes + markers;
  const std::string cls = failed ? "fail" : "pass";
  out += "<path class=\"vl " + cls + "\" d=\"M" + axis.x(runEndNs) + " 14V" + number(height - 2) +
         "\"/>";
  out += "<text class=\"vt " + cls + "\" x=\"" + number(kWidth - 2) +
         "\" y=\"10\" text-anchor=\"end\">" + htmlEscape(verdict) + "</text>";
  out += "</svg>";
  return out;
}

HtmlReport::HtmlReport(HtmlOptions options) : options_(std::move(options)) {}

namespace {

// A run's one-line summary: PASS or FAIL, its name, ranks, time, seed, the controls that failed
// as expected and why it failed.
std::string runSummary(const RunRecord& record, const Judgement& judgement, const std::string& name,
                       const std::string& titles) {
  const int ranks =
      record.scenario.ranks > 0 ? record.scenario.ranks : static_cast<int>(record.ranks.size());
  std::string out =
      "<summary><span class=\"b\">" + std::string(judgement.passed ? "PASS" : "FAIL") +
      "</span> <span class=\"nm\">" + htmlEscape(name) + "</span> <span class=\"dim\">" +
      rankWord(ranks) + " · " + formatDuration(record.wallNs) + " wall · seed " +
      std::to_string(record.seed) +
      (record.simulatedTime() ? " · events on simulated time" : " · events on wall time") +
      "</span>";
  if (!judgement.controls.empty()) {
    std::string controls;
    for (const std::string& c : judgement.controls) controls += (controls.empty() ? "" : ", ") + c;
    out += " <span class=\"ctl\">" + htmlEscape(controls) + " failed as expected</span>";
  }
  if (!judgement.refusals.empty()) {
    std::string rules;
    for (const std::string& r : judgement.refusals) rules += (rules.empty() ? "" : ", ") + r;
    out +=
        " <span class=\"ctl\">the judge refused it as expected: " + htmlEscape(rules) + "</span>";
  }
  if (!judgement.passed) out += " <span class=\"why\">" + htmlEscape(titles) + "</span>";
  return out + "</summary>";
}

// The file, launcher, runtime and fault sites of a run.
std::string runFacts(const RunRecord& record) {
  std::string out = "<p class=\"dim\"><span class=\"file\">" + htmlEscape(record.scenario.file) +
                    "</span> · launcher " + htmlEscape(record.launcher) + " · runtime " +
                    htmlEscape(record.runtime);
  if (!record.firedSites.empty()) {
    out += " · fault sites fired:";
    for (const std::string& site : record.firedSites) out += " " + htmlEscape(site);
  }
  return out + "</p>";
}

// What the run was asked to show: the scenario's faults and its expectation, as the file says
// them, so the picture and the verdicts can be read against them.
std::string faultsAndExpectation(const Scenario& scenario) {
  std::string out = "<div class=\"spec\"><h4>Faults and expectation</h4><ul>";
  if (scenario.faults.empty()) out += "<li>no faults</li>";
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const Fault& fault = scenario.faults[i];
    std::string text = "fault #" + std::to_string(i) + ": " + toString(fault.site) + " on rank" +
                       (fault.ranks.size() == 1 ? " " : "s ");
    for (std::size_t r = 0; r < fault.ranks.size(); ++r) {
      text += (r > 0 ? ", " : "") + std::to_string(fault.ranks[r]);
    }
    const bool atPoint = fault.site == FaultSite::kDelay || fault.site == FaultSite::kDeath ||
                         fault.site == FaultSite::kHang || fault.site == FaultSite::kExit ||
                         fault.site == FaultSite::kGroupFail ||
                         fault.site == FaultSite::kCollectiveOrder;
    if (atPoint) text += " at " + toString(fault.at);
    if (fault.peer) text += ", peer " + std::to_string(*fault.peer);
    if (fault.site == FaultSite::kDelay)
      text += ", late by " + formatNs(fault.delay.count() * 1'000'000);
    if (fault.error != 0) text += ", " + hipErrorName(fault.error);
    if (fault.site == FaultSite::kExit) text += ", exit code " + std::to_string(fault.code);
    if (fault.site == FaultSite::kBufferSize) {
      text += ", buffer " + std::to_string(fault.buffer) + " with " + std::to_string(fault.size) +
              " bytes";
    }
    if (fault.site == FaultSite::kBufferLabel) {
      text += ", buffer " + std::to_string(fault.buffer) + " labelled '" + fault.label + "'";
    }
    if (fault.site == FaultSite::kBufferCount) {
      text += ", registers " + std::to_string(fault.registers) + " buffer(s)";
    }
    if (fault.site == FaultSite::kForeignException) {
      text += ", call " + std::string(faults::seamCallName(fault.call));
    }
    if (fault.site == FaultSite::kEntryCorrupt) {
      text += ", part " + std::string(faults::entryPartName(fault.part));
    }
    if (fault.count > 0) text += ", at most " + std::to_string(fault.count) + " times";
    if (fault.probability < 1.0) {
      char p[32];
      std::snprintf(p, sizeof p, "%g", fault.probability);
      text += ", probability " + std::string(p);
    }
    if (fault.mark.line > 0) text += " (line " + std::to_string(fault.mark.line) + ")";
    out += "<li>" + htmlEscape(text) + "</li>";
  }
  const Expectation& expect = scenario.expect;
  std::string text =
      "outcome " + (expect.asDrawn ? std::string(model::kAsDrawn) : toString(expect.outcome));
  if (!expect.reported.empty()) {
    text += "; reported ranks";
    for (int rank : expect.reported) text += " " + std::to_string(rank);
  }
  for (const auto& [rank, message] : expect.messages) {
    text += "; rank " + std::to_string(rank) + ": " + toString(message);
  }
  if (expect.others) text += "; others: " + toString(*expect.others);
  if (expect.within) text += "; within " + formatNs(expect.within->count() * 1'000'000);
  for (const std::string& violation : expect.violations) {
    text += "; must fail " + violation;
    for (const ExpectedFinding& finding : expect.findings) {
      if (finding.property == violation) text += " with \"" + finding.text + "\"";
    }
  }
  if (!scenario.core.empty()) text += "; core " + scenario.core;
  return out + "</ul><p>expect: " + htmlEscape(text) + "</p></div>";
}

// "Why it failed": each failure, with its findings when no verdict row below lists them.
void whyItFailed(std::string& out, const Judgement& judgement,
                 const std::vector<Verdict>& verdicts) {
  out += "<div class=\"fails\"><h4>Why it failed</h4><ul>";
  for (const Failure& failure : judgement.failures) {
    out += "<li><b>" + htmlEscape(failure.title) + "</b>: " + htmlEscape(failure.summary);
    // A checker's findings are in the verdict table below; other failures' (coverage) here.
    const bool ofVerdict = std::any_of(verdicts.begin(), verdicts.end(), [&](const Verdict& v) {
      return toString(v.property) == failure.title;
    });
    if (!ofVerdict) findingsList(out, failure.findings);
    out += "</li>";
  }
  out += "</ul></div>";
}

void verdictTable(std::string& out, const std::vector<Verdict>& verdicts) {
  out +=
      "<table class=\"vt\"><tr><th>property</th><th>verdict</th><th>summary and "
      "findings</th></tr>";
  for (const Verdict& verdict : verdicts) {
    const auto [word, cls] = verdictWord(verdict);
    out += "<tr><td>" + htmlEscape(toString(verdict.property)) + "</td><td class=\"" + cls + "\">" +
           word + "</td><td>" + htmlEscape(verdict.summary);
    findingsList(out, verdict.findings);
    out += "</td></tr>";
  }
  out += "</table>";
}

// The ranks' outcomes (C1's findings and the picture say "ok" already when that is all).
void ranksTable(std::string& out, const RunRecord& record) {
  const bool quiet = std::all_of(record.ranks.begin(), record.ranks.end(), [](const auto& r) {
    return r.status == RankStatus::kOk && r.message.empty() && r.cause.empty();
  });
  if (quiet) return;
  out += "<table class=\"rk\"><tr><th>rank</th><th>outcome</th><th>error</th><th>message</th></tr>";
  for (const RankResult& rank : record.ranks) {
    std::string error = rank.errorType;
    if (rank.errorType == "HandshakeError") error += rank.thisRank ? " (this)" : " (another)";
    std::string message = rank.message;
    if (!rank.cause.empty()) message += (message.empty() ? "cause: " : " — cause: ") + rank.cause;
    out += "<tr><td>" + std::to_string(rank.rank) + "</td><td>" + toString(rank.status) +
           "</td><td>" + htmlEscape(error) + "</td><td>" + htmlEscape(message) + "</td></tr>";
  }
  out += "</table>";
}

}  // namespace

void HtmlReport::onScenario(const RunRecord& record, const Judgement& judgement) {
  const std::size_t index = passed_ + failed_ + 1;
  (judgement.passed ? passed_ : failed_) += 1;
  wallNs_ += std::max<std::int64_t>(record.wallNs, 0);
  for (const std::string& site : record.firedSites) sites_[site] += 1;
  const std::string id = "s-" + std::to_string(index);
  const std::string name = displayName(record);
  const char* status = judgement.passed ? "pass" : "fail";
  // Failing runs start expanded, the first kExpandedFailures of them (a page of hundreds of
  // expanded runs opens slowly; the rest open with "expand all" or ?open=fail).
  const bool open = !judgement.passed && failed_ <= kExpandedFailures;
  if (!judgement.passed) failures_.emplace_back(id, name);

  std::string titles;
  for (const Failure& failure : judgement.failures) {
    titles += (titles.empty() ? "" : ", ") + failure.title;
  }

  std::string& out = body_;
  out += "<details class=\"sc " + std::string(status) + "\" id=\"" + id + "\" data-status=\"" +
         status + "\"" + (open ? " open" : "") + ">" + runSummary(record, judgement, name, titles) +
         "<div class=\"body\">";
  out += runFacts(record);
  if (!judgement.passed) whyItFailed(out, judgement, judgement.verdicts);
  out += faultsAndExpectation(record.scenario);

  // What to do about it, and the picture, before the tables.
  const std::string codeId = "r-" + std::to_string(index);
  out += "<div class=\"repro\"><code id=\"" + codeId + "\">" +
         htmlEscape(reproduceCommand(record)) + "</code><button type=\"button\" class=\"copy\" " +
         "data-for=\"" + codeId + "\">copy</button></div>";

  const std::string verdict = judgement.passed ? "PASS" : "FAIL: " + titles;
  out += swimlaneSvg(record, verdict, !judgement.passed);
  verdictTable(out, judgement.verdicts);
  ranksTable(out, record);

  out += "</div></details>\n";
}

void HtmlReport::onSkipped(const std::string& name, const std::string& reason) {
  skipped_.emplace_back(name, reason);
}

void HtmlReport::write(std::ostream& out) const {
  const std::string counts = std::to_string(passed_) + " passed, " + std::to_string(failed_) +
                             " failed, " + std::to_string(skipped_.size()) + " skipped" +
                             (interrupted_.empty() ? "" : ", interrupted");
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      << "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      << "<title>" << htmlEscape(options_.title) << ": " << counts << "</title><style>" << kStyle
      << "</style></head>\n<body>" << kDefs << "<header><h1>" << htmlEscape(options_.title)
      << "</h1>";
  if (!options_.command.empty()) {
    out << "<p class=\"meta\">command: <code>" << htmlEscape(options_.command) << "</code></p>";
  }
  if (!options_.generated.empty()) {
    out << "<p class=\"meta\">generated " << htmlEscape(options_.generated) << "</p>";
  }
  out << "</header>\n<section id=\"summary\"><h2>Summary</h2><p class=\"counts\">"
      << "<span class=\"cp\" id=\"n-pass\">" << passed_ << " passed</span>"
      << "<span class=\"cf\" id=\"n-fail\">" << failed_ << " failed</span>"
      << "<span class=\"cs\" id=\"n-skip\">" << skipped_.size() << " skipped</span>"
      << "<span class=\"dim\" style=\"color:#57606a\">" << passed_ + failed_ << " runs, "
      << formatDuration(wallNs_) << " wall time in all</span></p>";
  if (!interrupted_.empty()) {
    out << "<p id=\"interrupted\" style=\"color:var(--fail);font-weight:600\">"
        << htmlEscape(interrupted_)
        << ": the run under way was ended and is not reported; the rest did not run.</p>";
  }
  out << "<p id=\"sites\">fault sites fired: ";
  if (sites_.empty()) out << "none";
  for (const auto& [site, runs] : sites_) {
    out << "<span class=\"site\">" << htmlEscape(site) << "</span><span class=\"dim\">(" << runs
        << (runs == 1 ? " run" : " runs") << ")</span> ";
  }
  out << "</p>";
  if (!failures_.empty()) {
    out << "<p>failed: ";
    for (std::size_t i = 0; i < failures_.size(); ++i) {
      out << (i == 0 ? "" : ", ") << "<a href=\"#" << failures_[i].first << "\">"
          << htmlEscape(failures_[i].second) << "</a>";
    }
    out << "</p>";
    if (failures_.size() > kExpandedFailures) {
      out << "<p class=\"dim\">The first " << kExpandedFailures
          << " failing runs start expanded; \"expand all\" (or ?open=fail in the address) "
             "opens the rest.</p>";
    }
  }
  if (!skipped_.empty()) {
    out << "<details id=\"skipped\"><summary>" << skipped_.size() << " skipped</summary><ul>";
    for (const auto& [name, reason] : skipped_) {
      out << "<li><span class=\"nm\">" << htmlEscape(name) << "</span>: " << htmlEscape(reason)
          << "</li>";
    }
    out << "</ul></details>";
  }
  out << "<div id=\"legend\"><svg viewBox=\"0 0 800 22\" role=\"img\" aria-label=\"legend\">"
      << "<path class=\"p-construct\" d=\"M0 11h22\"/>"
      << "<text x=\"26\" y=\"15\">phase</text>"
      << "<path class=\"sm\" d=\"M70 11h22\"/><text x=\"96\" y=\"15\">seam call</text>"
      << "<use href=\"#pc-fault\" x=\"160\" y=\"11\"/><text x=\"168\" y=\"15\">fault fired</text>"
      << "<use href=\"#pc-raise\" x=\"238\" y=\"11\"/><text x=\"246\" y=\"15\">raised</text>"
      << "<use href=\"#pc-timeout\" x=\"296\" y=\"11\"/><text x=\"304\" y=\"15\">timed out</text>"
      << "<path class=\"stop\" d=\"M364 11h22\"/>"
      << "<text x=\"390\" y=\"15\">stopped (dead, hung)</text>"
      << "<circle class=\"o-ok\" cx=\"520\" cy=\"11\" r=\"4\"/>"
      << "<circle class=\"o-raised\" cx=\"530\" cy=\"11\" r=\"4\"/>"
      << "<circle class=\"o-hung\" cx=\"540\" cy=\"11\" r=\"4\"/>"
      << "<circle class=\"o-dead\" cx=\"550\" cy=\"11\" r=\"4\"/>"
      << "<text x=\"558\" y=\"15\">outcome (ok, raised, hung, dead)</text>"
      << "<path class=\"vl fail\" d=\"M740 3v16\"/><text x=\"746\" y=\"15\">verdict</text>"
      << "</svg></div></section>\n";
  out << "<div id=\"bar\"><input id=\"filter\" type=\"search\" placeholder=\"filter by name or "
         "path\" aria-label=\"filter\"><select id=\"status\" aria-label=\"status\">"
      << "<option value=\"\">all</option><option value=\"fail\">failed</option>"
      << "<option value=\"pass\">passed</option></select>"
      << "<button type=\"button\" id=\"expand\">expand all</button>"
      << "<button type=\"button\" id=\"collapse\">collapse all</button>"
      << "<span id=\"shown\" class=\"dim\"></span></div>\n<main id=\"scenarios\">\n"
      << body_ << "</main>\n<script>" << kScript << "</script>\n</body></html>\n";
}

void HtmlReport::writeFile(const std::string& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error("cannot write the HTML report to " + path);
  write(file);
  file.flush();
  if (!file) throw std::runtime_error("failed while writing the HTML report to " + path);
}

}  // namespace peerconf::harness::reports
