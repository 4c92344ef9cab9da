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


def fixture_db(path: str) -> None:
    """A small bench database: one run on 4 disks, two layouts, and two drills."""
    conn = connect(path)
    fio = open(os.path.join(os.path.dirname(__file__), "..", "data", "zfs-2.1", "fio_write.json")).read()
    conn.execute("INSERT INTO runs (key, started_at, command, suite, repeats, options_json, sandbox, zfs_version, "
                 "kernel, cpu, ram_bytes) VALUES ('k', '2026-11-22T10:00:00', 'zfslab bench', 'quick', 1, '{}', 0, "
                 "'2.1.11', '6.1.0', 'Xeon x2', 4294967296)")
    for i in range(4):
        conn.execute("INSERT INTO run_disks VALUES (1, ?, ?, ?, 'WD', 4000787030016, 1)", (i, f"/dev/sd{'abcd'[i]}", f"S{i}"))
    for layout, w, r in (("2xmirror:2", 400.0, 700.0), ("raidz1:4", 600.0, 650.0)):
        for test, wv, rv in (("seqwrite", w, None), ("seqread", None, r)):
            conn.execute("INSERT INTO measurements (run_id, layout, test, repeat, started_at, seconds, read_mb_s, "
                         "write_mb_s, read_iops, write_iops, fio_json) VALUES (1, ?, ?, 1, 'now', 10, ?, ?, 0, 0, ?)",
                         (layout, test, rv, wv, fio))
    conn.execute("INSERT INTO drills (layout, scenario, started_at, seconds, outcome, verdict, data_json) VALUES "
                 "('raidz1:4', 'degraded', 'now', 12, 'survived', 'raidz1:4 at 50 % full: survived 1 failed disk, data verified', '{}')")
    conn.close()


class Tables(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table = None
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(a.get("id", "?"), [])
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._table.append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_report_in_headless_chromium(tmp_path, capsys):
    browser = chromium()
    db = str(tmp_path / "r.sqlite")
    fixture_db(db)
    page = tmp_path / "report.html"
    assert main(["report", "--db", db, "--plan", "4x4TB", "--html", str(page), "--charts", str(tmp_path / "c")]) == 0
    assert main(["report", "--db", db, "--plan", "4x4TB", "--json"]) == 0
    data = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    # the page as the browser builds it, and its console
    dump = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr",
                           "--v=0", "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dump.returncode == 0, dump.stderr[-2000:]
    console = [line for line in dump.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    parsed = Tables()
    parsed.feed(dump.stdout)
    summary = parsed.tables["summary"]
    assert [row[1] for row in summary[1:]] == [r["layout"] for r in data["layouts"]]
    assert [row[3] for row in summary[1:]] == [f"{r['usable_tb']:.2f}" for r in data["layouts"]]
    assert [row[11] for row in summary[1:]] == [f"{r['p_loss']['5']:.2e}" for r in data["layouts"]]
    assert [r[0] for r in parsed.tables["drills"][1:]] == ["raidz1:4"]
    measured = {(r[0], r[1]): r for r in parsed.tables["bench"][1:]}
    assert measured[("raidz1:4", "seqwrite")][4] == "600.0"
    assert dump.stdout.count("<svg") >= 3  # relative, corners, measured vs predicted
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
