"""The HTML report in a real headless Chromium: no console errors, charts drawn, table = data.

Needs Debian's chromium (scripts/install-test-deps.sh installs it); skipped without it, unless
ZFSLAB_TEST_REQUIRE_BROWSER=1, when a skip fails.
"""

from __future__ import annotations

import html.parser
import json
import os
import shutil
import sqlite3
import subprocess

import matplotlib.image
import numpy as np
import pytest

from zfslab.cli import main
from zfslab.model.units import odds
from zfslab.store.schema import connect

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("ZFSLAB_TEST_REQUIRE_BROWSER") == "1":
            pytest.fail("ZFSLAB_TEST_REQUIRE_BROWSER=1 but chromium is not installed")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


def fixture_db(path: str, disks: int = 4, layouts=(("2xmirror:2", 400.0, 700.0), ("raidz1:4", 600.0, 650.0))) -> None:
    """A small bench database: one run on `disks` 4 TB disks, two measured layouts, and a drill."""
    conn = connect(path)
    fio = open(os.path.join(os.path.dirname(__file__), "..", "data", "zfs-2.1", "fio_write.json")).read()
    conn.execute("INSERT INTO runs (key, started_at, command, suite, repeats, options_json, sandbox, zfs_version, "
                 "kernel, cpu, ram_bytes) VALUES ('k', '2026-11-22T10:00:00', 'zfslab bench', 'quick', 1, '{}', 0, "
                 "'2.1.11', '6.1.0', 'Xeon x2', 4294967296)")
    for i in range(disks):
        conn.execute("INSERT INTO run_disks VALUES (1, ?, ?, ?, 'WD', 4000787030016, 1)", (i, f"/dev/disk{i}", f"S{i}"))
    for layout, w, r in layouts:
        for test, wv, rv in (("seqwrite", w, None), ("seqread", None, r)):
            conn.execute("INSERT INTO measurements (run_id, layout, test, repeat, started_at, seconds, read_mb_s, "
                         "write_mb_s, read_iops, write_iops, fio_json) VALUES (1, ?, ?, 1, 'now', 10, ?, ?, 0, 0, ?)",
                         (layout, test, rv, wv, fio))
    conn.execute("INSERT INTO drills (layout, scenario, started_at, seconds, outcome, verdict, data_json) VALUES "
                 "(?, 'degraded', 'now', 12, 'survived', ? || ' at 50 % full: survived 1 failed disk, data verified', '{}')",
                 (layouts[-1][0], layouts[-1][0]))
    conn.close()


class Tables(html.parser.HTMLParser):
    """Every table of a page by id: rows of cell texts; the keys of its columns (th data-key); row classes."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.keys: dict[str, list[str]] = {}
        self.row_classes: dict[str, list[str]] = {}
        self._id = None
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._id = a.get("id", "?")
            self.tables.setdefault(self._id, [])
        elif tag == "tr" and self._id is not None:
            self._row = []
            self.row_classes.setdefault(self._id, []).append(a.get("class") or "")
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
            if tag == "th":
                self.keys.setdefault(self._id, []).append(a.get("data-key", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._id].append(self._row)
            self._row = None
        elif tag == "table":
            self._id = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data

    def column(self, table: str, key: str) -> list[str]:
        """One column's cells, header left out."""
        i = self.keys[table].index(key)
        return [row[i] for row in self.tables[table][1:]]


# Appended to a copy of the page: measures it as a person would find it, then writes what it found
# into the DOM, where --dump-dom shows it. With #all in the address it leaves every toggle on.
PROBE = """<script>
(function () {
  function cuts() {  // the document's width, and any element whose right edge is past the window
    var out = [];
    document.querySelectorAll('body *').forEach(function (el) {
      if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') return;
      var r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > window.innerWidth + 0.5) out.push(el.tagName + '#' + el.id + '.' + el.className);
      if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') out.push('scrolls:' + el.tagName + '#' + el.id);
    });
    return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
            clientWidth: document.documentElement.clientWidth, cut: out.slice(0, 10)};
  }
  function visible() {
    return Array.prototype.filter.call(document.querySelectorAll('#summary tbody tr'),
                                       function (r) { return r.offsetParent !== null; }).length;
  }
  function fonts() {  // the smallest text of the charts as drawn: its font size times the SVG's scale
    var least = 1e9, where = '';
    document.querySelectorAll('.chart svg').forEach(function (svg) {
      var scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      svg.querySelectorAll('text').forEach(function (t) {
        var px = parseFloat(getComputedStyle(t).fontSize) * scale;
        if (t.textContent.trim() && px < least) { least = px; where = t.textContent; }
      });
    });
    return {px: least, text: where};
  }
  function gaps() {  // the narrowest space between the texts of two cells side by side in the layouts' table
    var least = 1e9, where = '';
    document.querySelectorAll('#summary tr').forEach(function (tr) {
      if (tr.offsetParent === null) return;
      var prev = null, prevText = '';
      Array.prototype.forEach.call(tr.cells, function (c) {
        if (c.offsetParent === null || !c.textContent.trim()) return;
        var range = document.createRange();
        range.selectNodeContents(c);
        var r = range.getBoundingClientRect();
        if (prev && r.left - prev.right < least) { least = r.left - prev.right; where = prevText + ' | ' + c.textContent; }
        prev = r; prevText = c.textContent;
      });
    });
    return {px: least, between: where};
  }
  var boxes = document.querySelectorAll('input[data-shows]');
  var out = {first: Array.prototype.slice.call(document.body.children, 0, 3).map(function (el) {
               return el.tagName.toLowerCase() + (el.id ? '#' + el.id : ''); }),
             toggles: Array.prototype.map.call(boxes, function (b) { return b.id; }),
             recTop: document.getElementById('recommendation').getBoundingClientRect().top,
             recBottom: document.getElementById('recommendation').getBoundingClientRect().bottom,
             shortlist: cuts(), rows: visible()};
  out.fonts = fonts();
  out.gap = gaps();
  boxes.forEach(function (b) { b.click(); });
  out.everything = cuts();
  out.gapAll = gaps();
  out.rowsAll = visible();
  out.height = document.documentElement.scrollHeight;
  if (location.hash !== '#all') boxes.forEach(function (b) { b.click(); });
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.style.display = 'none';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def probe(browser: str, page, tmp_path, width: int, height: int, shot=None, fragment: str = "") -> dict:
    """What the probe measured in a window of width × height; a screenshot of that window to `shot`."""
    probed = tmp_path / f"probed-{page.stem}.html"
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    window = f"--window-size={width},{height}"
    dump = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'probe'}", window, "--dump-dom",
                           probed.as_uri() + fragment], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr[-2000:]
    text = dump.stdout.split('<pre id="probe" style="display: none;">', 1)[1].split("</pre>", 1)[0]
    if shot is not None:
        subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'shot'}", window, "--hide-scrollbars",
                        f"--screenshot={shot}", probed.as_uri() + fragment], capture_output=True, timeout=120, check=True)
    return json.loads(html.unescape(text))


def shots_dir(tmp_path):
    """Where screenshots go: $ZFSLAB_TEST_SHOTS to look at them after the run, else the test's folder."""
    folder = os.environ.get("ZFSLAB_TEST_SHOTS") or str(tmp_path)
    os.makedirs(folder, exist_ok=True)
    return folder


def test_report_in_headless_chromium(tmp_path, capsys):
    browser = chromium()
    db = str(tmp_path / "r.sqlite")
    fixture_db(db)
    page = tmp_path / "report.html"
    assert main(["report", "--db", db, "--plan", "4x4TB", "--html", str(page), "--charts", str(tmp_path / "c")]) == 0
    assert main(["report", "--db", db, "--plan", "4x4TB", "--json"]) == 0
    data = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    rec = data["recommendation"]
    # the page as the browser builds it, and its console
    dump = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
                           "--v=0", "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr[-2000:]
    console = [line for line in dump.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    parsed = Tables()
    parsed.feed(dump.stdout)
    # the short list first, in the recommendation's order, then every other layout (hidden until asked)
    by_layout = {r["layout"]: r for r in data["layouts"]}
    order = rec["shortlist"] + [r["layout"] for r in data["layouts"] if r["layout"] not in rec["shortlist"]]
    assert parsed.column("summary", "layout") == [x + by_layout[x]["shape"] for x in order]  # the shape below the name
    assert parsed.row_classes["summary"][1:] == [
        "recommended" if x == rec["layout"] else "short" if x in rec["shortlist"] else "other" for x in order]
    assert parsed.column("summary", "mark") == ["★" if x == rec["layout"] else "◆" if x in rec["shortlist"] else ""
                                                for x in order]
    assert parsed.column("summary", "tb") == [f"{by_layout[x]['usable_tb']:,.2f}" for x in order]
    # both risks at the goal's horizon, written as plan writes them
    assert parsed.column("summary", "loss") == [odds(by_layout[x]["p_loss"]["5"]) for x in order]
    assert parsed.column("summary", "damage") == [odds(by_layout[x]["p_damage"]["5"]) for x in order]
    header = dict(zip(parsed.keys["summary"], parsed.tables["summary"][0]))
    assert header["loss"] == "P(loss)5 y" and header["damage"] == "P(damage)5 y"
    notes = dict(zip(order, parsed.column("summary", "note")))
    assert all(notes[x] == "" for x in rec["shortlist"])
    assert all(notes[x] == "; ".join(why) for x, why in rec["left_out"].items())
    measured = dict(zip(order, parsed.column("summary", "measured_write")))
    assert measured["raidz1:4"] == "600" and measured["2xmirror:2"] == "400"
    assert [r[0] for r in parsed.tables["drills"][1:]] == ["raidz1:4"]
    bench = {(r[0], r[1]): r for r in parsed.tables["bench"][1:]}
    assert bench[("raidz1:4", "seqwrite")][4] == "600.0"
    assert dump.stdout.count("<svg") >= 3  # relative, corners, measured vs predicted
    assert "Pareto" not in dump.stdout and "frontier" not in dump.stdout.replace('"frontier"', "")
    # what a person sees: a screenshot that is not blank
    shot = tmp_path / "shot.png"
    subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile2'}", "--window-size=1400,2400",
                    f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, check=True)
    pixels = matplotlib.image.imread(str(shot))[..., :3]
    assert pixels.std() > 0.05  # not one flat colour
    colourful = (np.abs(pixels[..., 0] - pixels[..., 2]) > 0.2).mean()
    assert colourful > 0.005  # the coloured bars and dots of the charts are on the page
    for name in ("relative", "corners", "measured"):
        chart = matplotlib.image.imread(str(tmp_path / "c" / f"{name}.png"))
        assert chart.shape[0] > 200 and chart[..., :3].std() > 0.05


@pytest.mark.parametrize("width,height", [(1366, 768), (1920, 1080)])
def test_the_answer_comes_first_and_nothing_is_cut(tmp_path, width, height):
    """24 disks give the widest page (47 layouts, long shapes); bench results add the measured columns."""
    browser = chromium()
    db = str(tmp_path / "r.sqlite")
    fixture_db(db, disks=24, layouts=(("8xmirror:3", 1500.0, 4200.0), ("4xraidz2:6", 2400.0, 3100.0)))
    page = tmp_path / "report.html"
    assert main(["report", "--db", db, "--html", str(page)]) == 0
    folder = shots_dir(tmp_path)
    first = probe(browser, page, tmp_path, width, height, shot=os.path.join(folder, f"report-{width}x{height}.png"))
    # the title, then the recommendation, whole in the first screen
    assert first["first"][:2] == ["h1", "section#recommendation"]
    assert 0 < first["recTop"] < first["recBottom"] <= height
    assert first["toggles"] == ["show-all", "more-columns"]
    # no horizontal scroll, nothing past the window's right edge, with the short list or with everything shown
    assert first["shortlist"]["innerWidth"] == width
    for state in ("shortlist", "everything"):
        m = first[state]
        assert m["scrollWidth"] <= m["innerWidth"] and m["scrollWidth"] <= m["clientWidth"], (state, m)
        assert m["cut"] == [], (state, m)
    assert 2 <= first["rows"] <= 8 and first["rowsAll"] == 47
    # every chart label, legend and tick at least 10 px as shown; cells apart even with every column on
    assert first["fonts"]["px"] >= 10, first["fonts"]
    assert first["gap"]["px"] >= 8 and first["gapAll"]["px"] >= 8, (first["gap"], first["gapAll"])
    # the recommendation's green edge is on the first screen
    pixels = matplotlib.image.imread(os.path.join(folder, f"report-{width}x{height}.png"))[..., :3]
    green = (np.abs(pixels - np.array([0x2C, 0xA0, 0x2C]) / 255).max(axis=2) < 0.05)
    assert green[: height // 2].sum() > 100
    # the whole page with every layout and column, for a person to look at
    whole = probe(browser, page, tmp_path, width, first["height"] + 400, fragment="#all",
                  shot=os.path.join(folder, f"report-{width}-all.png"))
    assert whole["everything"]["cut"] == []
