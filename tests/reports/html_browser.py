#!/usr/bin/env python3
"""The HTML report (`peerconf run --html FILE`) opened in a real headless browser (Debian's
chromium): a real run over a few scenarios with a planted core, so that some fail
(`--core leaks-on-failure`), one scenario named `<script>...&...` in a folder named with `&` and
`<`. Checks:
- the DOM chromium builds (`--dump-dom`, parsed with Python's html.parser) holds every scenario
  the run printed, with the verdict it printed (PASS/FAIL), its verdict table (C1..C8 rows), its
  reproduce line and its swimlane; the page's own script is the only script and it ran to the end
  (body[data-load-ms]); the summary counts match;
- the filter (preset by `?status=pass&q=...`) hides every other scenario;
- a screenshot (`--screenshot`) of the page showing the failing scenarios expanded
  (`?status=fail&open=fail`) is not blank: more than one colour, not nearly all white, the
  failing scenario's red border and its swimlane's phase colour on screen. The blank-page check is
  itself checked on a screenshot of an empty page (it must say blank).
Exit 77 (ctest SKIP) when no chromium is installed, unless PEERCONF_REQUIRE_BROWSER=1: then 1.
Usage: html_browser.py PEERCONF SCENARIOS_DIR WORK_DIR"""
import html.parser
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

SKIP = 77

# Colours of the page's stylesheet (harness/reports/html.cc) that the screenshot must show.
FAIL_RED = (0xCF, 0x22, 0x2E)  # a failing scenario's left border, the "failed" count
CONSTRUCT = (0xD6, 0xE6, 0xF7)  # the construct phase in a swimlane


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser, work, *args):
    """Runs headless chromium; returns its stdout (bytes)."""
    command = [
        browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--no-default-browser-check", "--disable-extensions",
        "--user-data-dir=" + os.path.join(work, "profile"), *args
    ]
    done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        sys.exit("chromium failed (exit %d): %s\n%s" %
                 (done.returncode, " ".join(command), done.stderr.decode(errors="replace")))
    return done.stdout


class ReportDom(html.parser.HTMLParser):
    """What the test needs of the report's DOM: per scenario (<details class="sc ...">) its
    status, badge, name, verdict rows, reproduce line and swimlanes; the scripts; the body."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scenarios = []
        self.scripts = 0
        self.body = {}
        self.counts = {}
        self._text = None  # (target dict, key) collecting text
        self._depth = 0  # <details> nesting inside the current scenario
        self._row = None
        self._cell = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "script":
            self.scripts += 1
        elif tag == "body":
            self.body = a
        elif tag == "details" and "sc" in classes:
            self.scenarios.append({
                "id": a.get("id"), "status": a.get("data-status"), "open": "open" in a,
                "hidden": "hidden" in a,
                "badge": "", "name": "", "rows": [], "reproduce": "", "svgs": 0
            })
            self._depth = 1
        elif tag == "details" and self._depth:
            self._depth += 1
        elif tag == "span" and a.get("id", "").startswith("n-"):
            self.counts[a["id"]] = ""
            self._text = (self.counts, a["id"])
        elif self._depth:
            current = self.scenarios[-1]
            if tag == "span" and "b" in classes and not current["badge"]:
                self._text = (current, "badge")
            elif tag == "span" and "nm" in classes and not current["name"]:
                self._text = (current, "name")
            elif tag == "code" and (a.get("id") or "").startswith("r-"):
                self._text = (current, "reproduce")
            elif tag == "svg" and "lanes" in classes:
                current["svgs"] += 1
            elif tag == "tr":
                self._row = {"property": "", "class": "", "word": ""}
                self._cell = 0
            elif tag == "td" and self._row is not None:
                self._cell += 1
                if self._cell == 1:
                    self._text = (self._row, "property")
                elif self._cell == 2:
                    self._row["class"] = a.get("class") or ""
                    self._text = (self._row, "word")

    def handle_endtag(self, tag):
        if tag in ("span", "code", "td"):
            self._text = None
        if tag == "tr" and self._row is not None:
            if re.match(r"C[1-8] ", self._row["property"]):
                self.scenarios[-1]["rows"].append(self._row)
            self._row = None
        if tag == "details" and self._depth:
            self._depth -= 1

    def handle_data(self, data):
        if self._text:
            target, key = self._text
            target[key] += data


def read_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA non-interlaced PNG (what
    chromium writes), decoded with zlib and struct only."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s is not a PNG" % path)
    pos, idat = 8, b""
    width = height = depth = colour = interlace = None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        sys.exit("%s: unsupported PNG (depth %s, colour type %s, interlace %s)" %
                 (path, depth, colour, interlace))
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            sys.exit("%s: bad PNG filter %d" % (path, kind))
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, channels)])
        previous = line
    return width, height, rows


def colour_counts(rows):
    counts = {}
    for row in rows:
        for pixel in row:
            counts[pixel] = counts.get(pixel, 0) + 1
    return counts


def non_blank(counts):
    """More than one colour and under 99% of the pixels white."""
    total = sum(counts.values())
    return len(counts) > 1 and counts.get((255, 255, 255), 0) < 0.99 * total


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    peerconf, scenarios, work = (os.path.abspath(p) for p in sys.argv[1:])
    browser = find_chromium()
    if not browser:
        if os.environ.get("PEERCONF_REQUIRE_BROWSER") == "1":
            print("FAIL: no chromium found and PEERCONF_REQUIRE_BROWSER=1 "
                  "(apt-get install chromium)")
            return 1
        print("SKIP: no chromium (apt-get install chromium); PEERCONF_REQUIRE_BROWSER=1 makes "
              "this a failure")
        return SKIP

    shutil.rmtree(work, ignore_errors=True)
    cases = os.path.join(work, "cases")
    nasty_dir = os.path.join(cases, "a&b<i>")
    os.makedirs(nasty_dir)
    for rel in ("handshake/success-2-ranks.yaml", "open/open-fails-two-ranks.yaml",
                "group/group-fail-exchange.yaml", "controls/c3-leaks-on-failure.yaml"):
        shutil.copy(os.path.join(scenarios, rel), cases)
    nasty_name = "esc<script>window.PWNED=1</script>&amp;x"
    with open(os.path.join(scenarios, "handshake/success-2-ranks.yaml")) as f:
        text = f.read()
    with open(os.path.join(nasty_dir, "nasty.yaml"), "w") as f:
        f.write('name: "%s"\n' % nasty_name + text)

    report = os.path.join(work, "report.html")
    run = subprocess.run([peerconf, "run", cases, "--core", "leaks-on-failure", "--html", report],
                         capture_output=True, text=True, timeout=300, check=False)
    print(run.stdout + run.stderr)
    if run.returncode != 1:
        sys.exit("peerconf run: exit %d, expected 1 (a scenario fails under the planted core)" %
                 run.returncode)
    printed = {}
    for line in run.stdout.splitlines():
        m = re.match(r"(?:\[\d+(?:/\d+)?\] )?(PASS|FAIL) (\S+) \(", line)
        if m:
            printed[m.group(2)] = m.group(1)
    if sorted(printed.values()).count("FAIL") < 1 or "PASS" not in printed.values():
        sys.exit("expected both PASS and FAIL lines, got %s" % printed)
    if printed.get(nasty_name) != "PASS":
        sys.exit("the scenario named %r did not run: %s" % (nasty_name, printed))

    url = "file://" + report
    # The DOM as chromium built it.
    dom = ReportDom()
    dom.feed(chromium(browser, work, "--dump-dom", url).decode())
    errors = []
    seen = {s["name"]: s for s in dom.scenarios}
    if len(dom.scenarios) != len(printed):
        errors.append("%d scenarios in the DOM, %d printed" % (len(dom.scenarios), len(printed)))
    for name, verdict in printed.items():
        s = seen.get(name)
        if s is None:
            errors.append("scenario %r missing from the DOM" % name)
            continue
        if s["badge"] != verdict or s["status"] != verdict.lower():
            errors.append("%r: DOM says %s/%s, the run printed %s" %
                          (name, s["badge"], s["status"], verdict))
        if s["open"] != (verdict == "FAIL"):
            errors.append("%r: open=%s (only failing scenarios start expanded)" % (name, s["open"]))
        properties = [r["property"].split()[0] for r in s["rows"]]
        for p in ("C1", "C2", "C3", "C4", "C5", "C8"):
            if p not in properties:
                errors.append("%r: no %s row in its verdict table (%s)" % (name, p, properties))
        failed_rows = [r for r in s["rows"] if "v-fail" in r["class"]]
        if verdict == "FAIL" and not failed_rows and name != "c3-leaks-on-failure":
            errors.append("%r failed but no verdict row says so" % name)
        if not s["reproduce"].startswith("peerconf run "):
            errors.append("%r: reproduce line %r" % (name, s["reproduce"]))
        if s["svgs"] != 1:
            errors.append("%r: %d swimlane pictures" % (name, s["svgs"]))
    if "a&b<i>" not in seen.get(nasty_name, {}).get("reproduce", ""):
        errors.append("the nasty scenario's reproduce line lost its path: %r" %
                      seen.get(nasty_name, {}).get("reproduce"))
    if dom.scripts != 1:
        errors.append("%d <script> elements in the DOM: a name or message became markup" %
                      dom.scripts)
    if "data-load-ms" not in dom.body:
        errors.append("the page's script did not run to its end (no body[data-load-ms])")
    passes = list(printed.values()).count("PASS")
    fails = list(printed.values()).count("FAIL")
    if dom.counts.get("n-pass") != "%d passed" % passes or \
            dom.counts.get("n-fail") != "%d failed" % fails:
        errors.append("summary counts %s, the run printed %d passed, %d failed" %
                      (dom.counts, passes, fails))

    # The filter box's script, preset from the address: only the passing run whose name or path
    # holds "SUCCESS-2" (any case) stays shown.
    filtered = ReportDom()
    filtered.feed(chromium(browser, work, "--dump-dom", url + "?status=pass&q=SUCCESS-2").decode())
    shown = sorted(s["name"] for s in filtered.scenarios if not s["hidden"])
    if shown != ["success-2-ranks"]:
        errors.append("?status=pass&q=SUCCESS-2 shows %s, expected ['success-2-ranks']" % shown)

    # A screenshot with the failing scenarios alone, expanded; and the blank-check's control.
    size = ["--window-size=1000,1400", "--force-device-scale-factor=1", "--hide-scrollbars"]
    blank_html = os.path.join(work, "blank.html")
    with open(blank_html, "w") as f:
        f.write("<!DOCTYPE html><html><body></body></html>\n")
    blank_png = os.path.join(work, "blank.png")
    chromium(browser, work, *size, "--screenshot=" + blank_png, "file://" + blank_html)
    if non_blank(colour_counts(read_png(blank_png)[2])):
        errors.append("control: the blank-page check calls an empty page non-blank")
    shot = os.path.join(work, "failing.png")
    chromium(browser, work, *size, "--screenshot=" + shot, url + "?status=fail&open=fail")
    width, height, rows = read_png(shot)
    counts = colour_counts(rows)
    print("screenshot %dx%d: %d colours, %d white, %d fail-red, %d construct-phase pixels" %
          (width, height, len(counts), counts.get((255, 255, 255), 0), counts.get(FAIL_RED, 0),
           counts.get(CONSTRUCT, 0)))
    if not non_blank(counts):
        errors.append("the screenshot of the failing scenario is blank")
    if counts.get(FAIL_RED, 0) < 100:
        errors.append("no failing scenario on screen (too few pixels of its red)")
    # The legend's swatch alone is 22x18 pixels: thousands mean an expanded swimlane.
    if counts.get(CONSTRUCT, 0) < 2000:
        errors.append("no expanded swimlane on screen (too few construct-phase pixels)")

    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("OK: %d scenarios in the DOM with their verdicts (%d passed, %d failed); screenshot "
          "non-blank" % (len(printed), passes, fails))
    return 0


if __name__ == "__main__":
    sys.exit(main())
