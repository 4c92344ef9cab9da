"""`zfslab report`: never changes the database it reads, and every file that is not one is a one-line error."""

import hashlib
import html
import json
import os
import re
import sqlite3

import pytest

from tests.conftest import DATA
from zfslab.store.schema import connect


def zfslab_db(path: str) -> str:
    """A small bench database as bench and drill write it: one run on 4 disks, two layouts, a drill."""
    conn = connect(path)
    fio = open(os.path.join(DATA, "zfs-2.1", "fio_write.json")).read()
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
                 "('raidz1:4', 'degraded', 'now', 12, 'survived', 'survived 1 failed disk, data verified', '{}')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def snapshot(folder) -> dict[str, str]:
    """Every file under folder with its content hash: what report must leave as it was."""
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(root, f)
            out[p] = hashlib.sha256(open(p, "rb").read()).hexdigest()
    return out


def test_report_reads_a_zfslab_database_without_changing_a_byte(run_cli, tmp_path):
    db = zfslab_db(str(tmp_path / "r.sqlite"))
    before = snapshot(tmp_path)
    r = run_cli("report", "--db", db, "--json")
    assert r.exit_code == 0
    data = json.loads(r.stdout)
    assert data["disks"] == "4 × 4.00 TB" and len(data["bench"]) == 4 and len(data["drills"]) == 1
    assert snapshot(tmp_path) == before  # no -wal, no -shm, no new table, same journal mode


def test_a_users_database_is_refused_and_left_as_it_was(run_cli, tmp_path):
    db = str(tmp_path / "photos.sqlite")
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, shutter REAL)")
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    before = snapshot(tmp_path)
    r = run_cli("report", "--db", db, "--json")
    assert (r.exit_code, r.stdout) == (2, "") and r.stderr.count("\n") == 1
    assert "not zfslab's" in r.stderr
    assert snapshot(tmp_path) == before
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert {t[0] for t in conn.execute("SELECT name FROM sqlite_master")} == {"runs", "photos"}


def _corrupt(path: str) -> None:
    # overwrite the pages after the first: the header still says SQLite, the tables do not read
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.seek(4096)
        f.write(b"\xa5" * (size - 4096))


@pytest.mark.parametrize("make,message", [
    (lambda p: open(p, "w").write("just text\n"), "not an SQLite database"),
    (lambda p: open(p, "wb").write(b"SQLite format 3\x00" + b"\x00" * 80), "not a usable SQLite database"),
    (lambda p: (zfslab_db(p), os.truncate(p, 6000)), ""),
    (lambda p: (zfslab_db(p), _corrupt(p)), ""),
    (lambda p: os.mkdir(p), "a directory"),
    (lambda p: None, "no such file"),
    (lambda p: (lambda c: (c.execute("CREATE TABLE schema_version (version)"),
                           c.execute("INSERT INTO schema_version VALUES ('two')"), c.commit()))(sqlite3.connect(p)),
     "schema_version"),
    (lambda p: os.mkfifo(p), "not a regular file"),
])
def test_files_that_are_not_a_zfslab_database(run_cli, tmp_path, make, message):
    db = str(tmp_path / "x.sqlite")
    make(db)
    before = snapshot(tmp_path) if not os.path.exists(db) or os.path.isfile(db) else None
    for fmt in ("--json", "--csv"):
        r = run_cli("report", "--db", db, fmt)
        assert (r.exit_code, r.stdout) == (2, ""), r.stderr
        assert r.stderr.startswith("zfslab: error: ") and r.stderr.count("\n") == 1 and message in r.stderr
        assert "internal error" not in r.stderr
    if before is not None:
        assert snapshot(tmp_path) == before


def test_a_zfslab_database_with_text_where_numbers_belong(run_cli, tmp_path):
    db = zfslab_db(str(tmp_path / "r.sqlite"))
    conn = sqlite3.connect(db)
    conn.execute("UPDATE run_disks SET size_bytes = 'big'")
    conn.execute("UPDATE drills SET seconds = 'long'")
    conn.commit()
    conn.close()
    r = run_cli("report", "--db", db, "--json")
    assert r.exit_code == 2 and "the file is damaged or was not written by zfslab" in r.stderr


def test_html_into_a_directory_or_a_missing_folder(run_cli, tmp_path):
    r = run_cli("report", "--html", str(tmp_path))
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"zfslab: error: cannot write {tmp_path}: it is a directory; give a file name in an existing folder\n"
    r = run_cli("report", "--html", str(tmp_path / "no" / "r.html"))
    assert r.exit_code == 2 and "does not exist" in r.stderr and r.stderr.count("\n") == 1
    r = run_cli("report", "--charts", str(tmp_path / "no" / "c"))
    assert r.exit_code == 2 and "does not exist" in r.stderr
    (tmp_path / "f").write_text("x")
    r = run_cli("report", "--charts", str(tmp_path / "f"))
    assert r.exit_code == 2 and "not a folder" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["f"]


def test_html_is_written_whole_through_a_temporary_file(run_cli, tmp_path, monkeypatch):
    from zfslab.report import files
    page = tmp_path / "r.html"
    page.write_text("the old report")

    def fail(*a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(files.os, "replace", fail)
    r = run_cli("report", "--plan", "4x4TB", "--html", str(page))
    assert r.exit_code == 2 and "No space left on device" in r.stderr
    assert page.read_text() == "the old report" and os.listdir(tmp_path) == ["r.html"]  # no half file, no temp file
    monkeypatch.undo()
    r = run_cli("report", "--plan", "4x4TB", "--html", str(page), "--years", "1,2")
    assert r.exit_code == 0 and page.read_text().startswith("<!doctype html>") and "P(loss)<br>2 y" in page.read_text()


def test_names_too_long_are_refused_before_the_work(run_cli, tmp_path):
    r = run_cli("report", "--html", str(tmp_path / ("a" * 300 + ".html")))
    assert r.exit_code == 2 and "the name is too long" in r.stderr
    r = run_cli("report", "--charts", str(tmp_path / ("a" * 300)))
    assert r.exit_code == 2 and "the name is too long" in r.stderr


def test_the_page_gives_plans_answer_first(run_cli, tmp_path):
    """The title, then the recommendation as plan gives it: the layout, the budget, the reason; then the short list."""
    from zfslab.model.units import odds
    page = tmp_path / "r.html"
    assert run_cli("report", "--plan", "6x16TB", "--html", str(page)).exit_code == 0
    data = json.loads(run_cli("report", "--plan", "6x16TB", "--json").stdout)
    rec, text = data["recommendation"], page.read_text()
    assert rec["layout"] == "raidz2:6" and rec["budget"].startswith("P(loss) ≤ 1 in 10,000")
    body = text.split("<body>", 1)[1]
    assert re.match(r"<h1>zfslab report: 6 × 16.00 TB disks</h1>\s*<section id=\"recommendation\" class=\"rec\">", body)
    section = body.split("</section>", 1)[0]
    assert "★ Recommended: <b id=\"recommended-layout\">raidz2:6</b>" in section
    assert f"For home data [{html.escape(rec['budget'])}], general workload, priority balanced:" in section
    assert html.escape(rec["reason"]) in section
    row = next(r for r in data["layouts"] if r["layout"] == "raidz2:6")
    for risk in (odds(row["p_loss"]["5"]), odds(row["p_damage"]["5"])):
        assert f"<dd>{risk}</dd>" in section and f'<td class="" data-v="{row["p_loss"]["5"]}">' in text
    # the short list first and marked; the others hidden behind a checkbox, each saying why it is left out
    table = text.split('<table id="summary"', 1)[1].split("</table>", 1)[0]
    marks = re.findall(r'<tr class="(\w+)"><td class="" data-v="\d">(.?)</td><td class="l w" data-v="([^"]+)"', table)
    listed = [m[2] for m in marks if m[0] != "other"]
    assert listed == rec["shortlist"] and [m[1] for m in marks if m[0] == "recommended"] == ["★"]
    assert all(m[1] == "◆" for m in marks if m[0] == "short") and all(m[1] == "" for m in marks if m[0] == "other")
    assert [m[2] for m in marks[len(listed):]] == [r["layout"] for r in data["layouts"] if r["layout"] not in listed]
    assert 'id="show-all" data-shows="all"' in text and 'id="more-columns" data-shows="more"' in text
    assert rec["left_out"] and all(html.escape("; ".join(why)) in table for why in rec["left_out"].values())
    assert "Pareto" not in text and "frontier" not in text


def test_when_no_layout_meets_the_budget_the_page_says_so(run_cli, tmp_path):
    page = tmp_path / "r.html"
    assert run_cli("report", "--plan", "2x4TB", "--data", "archive", "--html", str(page)).exit_code == 0
    section = page.read_text().split('<section id="recommendation"', 1)[1].split("</section>", 1)[0]
    assert section.startswith(' class="rec miss">') and "No layout meets the budget; the closest:" in section
    assert "No layout of these disks meets the budget for archive data" in section


def test_the_charts_mark_the_short_list_and_name_the_recommended_layout(run_cli):
    from zfslab.report import charts
    data = json.loads(run_cli("report", "--plan", "8x12TB", "--json").stdout)
    rec, records = data["recommendation"], data["layouts"]
    short = set(rec["shortlist"])
    svg = charts.corners(records, short, recommended=rec["layout"], horizon="5", loss_budget=rec["max_p_loss"],
                         budget_label="home data").decode()
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)  # SVG text stays text: searchable on the page
    assert f"★ {rec['layout']} (recommended)" in texts
    assert short - {rec["layout"]} <= set(texts) and len(short) >= 3
    assert not ({r["layout"] for r in records} - short) & set(texts)  # only the short list is named
    assert "1 in 10,000" in texts and "budget for home data: ≤ 1 in 10,000" in texts
    bars = re.findall(r"<text[^>]*>([^<]*)</text>", charts.relative_bars(
        records, shortlist=short, recommended=rec["layout"]).decode())
    assert f"★ {rec['layout']}" in bars and all(f"◆ {x}" in bars for x in short - {rec["layout"]})


def _csv(run_cli, *args):
    import csv as csv_module
    import io
    r = run_cli(*args)
    assert r.exit_code == 0
    return list(csv_module.DictReader(io.StringIO(r.stdout)))


def test_report_csv_is_plan_csv_flat_with_a_fixed_header_and_a_reason_for_every_row_left_out(run_cli):
    rows = _csv(run_cli, "report", "--plan", "24x4TB", "--csv")
    assert [r["layout"] for r in rows] == [r["layout"] for r in _csv(run_cli, "plan", "24x4TB", "--csv")]
    assert not [v for r in rows for v in r.values() if v.startswith(("{", "["))]  # one scalar a cell
    assert sum(r["recommended"] == "True" for r in rows) == 1
    assert any(r["shortlisted"] == "True" for r in rows)
    assert all(r["left_out_because"] for r in rows if r["shortlisted"] == "False")
    # numbers to the digits they mean: no 616.0000000000001 nor 83.33333333333333
    assert not [v for r in rows for v in r.values() if re.fullmatch(r"-?\d+\.\d{7,}(e-?\d+)?", v)]
    mixed = _csv(run_cli, "plan", "4x4TB,2x8TB", "--csv")  # the writer is shared
    assert list(mixed[0]) == list(rows[0])  # mixed sizes fill columns every plan has, in the same order
    assert any(r["wasted_bytes"] for r in mixed) and not any(r["wasted_bytes"] for r in rows)


@pytest.mark.parametrize("disks", ["8x12TB,4x8TB", "8x12TB+4x8TB", "6 x 16TB"])
def test_report_takes_every_disk_description_plan_takes(run_cli, disks):
    """One reader for both (issue 24: report --plan 8x12TB,4x8TB failed "bad size '12TB,4x8TB'")."""
    report = _csv(run_cli, "report", "--plan", disks, "--csv")
    assert report == _csv(run_cli, "plan", disks, "--csv", "--all")


# ---- the store's typed records, and report rendering them (issue 37: no column names past the store) ----

def test_read_results_hands_out_frozen_records_of_the_stored_values(tmp_path):
    from dataclasses import FrozenInstanceError

    from zfslab.store.readback import DrillRecord, MeasurementRecord, RunRecord, read_results
    stored = read_results(zfslab_db(str(tmp_path / "r.sqlite")))
    (run,) = stored.bench.runs
    assert type(run) is RunRecord and stored.latest is run
    assert (run.id, run.sandbox, run.started_at, run.zfs_version, run.kernel, run.cpu, run.ram_bytes) == (
        1, False, "2026-11-22T10:00:00", "2.1.11", "6.1.0", "Xeon x2", 4294967296)
    assert run.devices == ("/dev/sda", "/dev/sdb", "/dev/sdc", "/dev/sdd") and run.disk_ids == ("S0", "S1", "S2", "S3")
    assert (run.disk_count, run.disk_bytes, run.disk_rotational, run.origin) == (4, 4000787030016, True, None)
    assert (run.ashift, run.recordsize_bytes) == (12, 128 * 1024)   # '{}': bench's defaults
    assert all(type(m) is MeasurementRecord for m in stored.bench.measurements)
    assert [(m.run_id, m.layout, m.test, m.repeats, m.write_mb_s, m.read_mb_s) for m in stored.bench.measurements] == [
        (1, "2xmirror:2", "seqwrite", 1, 400.0, None), (1, "2xmirror:2", "seqread", 1, None, 700.0),
        (1, "raidz1:4", "seqwrite", 1, 600.0, None), (1, "raidz1:4", "seqread", 1, None, 650.0)]
    (drill,) = stored.drills
    assert type(drill) is DrillRecord
    assert (drill.layout, drill.scenario, drill.outcome, drill.verdict, drill.seconds) == (
        "raidz1:4", "degraded", "survived", "survived 1 failed disk, data verified", 12.0)
    with pytest.raises(FrozenInstanceError):
        run.sandbox = True
    assert read_results(None).bench.runs == () and read_results(None).latest is None


def test_report_json_prints_each_stored_row_whole(run_cli, tmp_path):
    """--json's runs and drills: every column as the table holds it (sandbox 0, not false), then what
    the store read of the disks; a measurement's row names its run."""
    db = zfslab_db(str(tmp_path / "r.sqlite"))
    conn = sqlite3.connect(db)
    run_columns = [c[1] for c in conn.execute("PRAGMA table_info(runs)")]
    drill_columns = [c[1] for c in conn.execute("PRAGMA table_info(drills)")]
    conn.close()
    data = json.loads(run_cli("report", "--db", db, "--json").stdout)
    (run,) = data["runs"]
    assert list(run) == run_columns + ["disks", "disk_ids", "disk_count", "disk_bytes", "disk_rotational"]
    assert (run["sandbox"], run["options_json"], run["suite"], run["uid"]) == (0, "{}", "quick", None)
    assert type(run["sandbox"]) is int and type(data["bench"][0]["cache_suspect"]) is bool   # as always printed
    assert (run["disks"], run["disk_ids"]) == ("/dev/sda, /dev/sdb, /dev/sdc, /dev/sdd", ["S0", "S1", "S2", "S3"])
    assert list(data["drills"][0]) == drill_columns and data["drills"][0]["seconds"] == 12.0
    assert data["bench"][2] == {"layout": "raidz1:4", "test": "seqwrite", "repeats": 1, "read_mb_s": None,
                                "write_mb_s": 600.0, "read_iops": 0.0, "write_iops": 0.0,
                                "read_mb_s_range": [None, None], "write_mb_s_range": [600.0, 600.0],
                                "cache_suspect": False, "run_id": 1}


def _rows(page: str, table_id: str) -> list[list[tuple[str, str]]]:
    """(data-v, text) of each cell of each body row of the page's table `table_id`."""
    body = page.split(f'<table id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r'<td class="[^"]*" data-v="([^"]*)">([^<]*)', tr) for tr in body.split("</tr>") if tr]


def test_the_page_renders_the_bench_drill_and_run_records(run_cli, tmp_path):
    db = zfslab_db(str(tmp_path / "r.sqlite"))
    conn = sqlite3.connect(db)
    conn.execute("UPDATE measurements SET cache_suspect = 1 WHERE layout = 'raidz1:4' AND test = 'seqread'")
    conn.commit()
    conn.close()
    page = tmp_path / "r.html"
    assert run_cli("report", "--db", db, "--html", str(page)).exit_code == 0
    text = page.read_text()
    bench = _rows(text, "bench")
    assert bench[3] == [("raidz1:4", "raidz1:4"), ("seqread", "seqread"), ("1", "1"), ("650.0", "650.0"), ("0", ""),
                        ("0", ""), ("0", ""), ("1", "cached?")]
    assert bench[2][4] == ("600.0", "600.0") and bench[2][7] == ("0", "")
    assert _rows(text, "drills") == [[("raidz1:4", "raidz1:4"), ("degraded", "degraded"), ("survived", "survived"),
                                      ("12.0", "12 s"), ("survived 1 failed disk, data verified",) * 2]]
    assert _rows(text, "runs") == [[("1", "1"), ("2026-11-22T10:00:00",) * 2, ("0", "2.1.11"), ("0", "6.1.0"),
                                    ("0", "Xeon x2"), ("4294967296", "4 GiB"),
                                    ("/dev/sda, /dev/sdb, /dev/sdc, /dev/sdd",) * 2, ("0", "disks")]]
    # the layouts' table: the measured streaming rates beside the predicted ones
    keys = re.findall(r'<th class="[^"]*" data-key=(\w+)', text.split('<table id="summary"', 1)[1])
    at = keys.index("measured_write")
    assert keys[at + 1] == "measured_read"
    measured = {row[1][0]: row[at:at + 2] for row in _rows(text, "summary")}
    assert measured["raidz1:4"] == [("600.0", "600"), ("650.0", "650")]
    assert measured["2xmirror:2"] == [("400.0", "400"), ("700.0", "700")]


def test_the_report_recommends_for_vms_as_plan_does(run_cli):
    """plan weighs a vm pool's space in 16K blocks (docs/recommend.md#space-at-the-workloads-block-size);
    the report named 2xraidz2:5 for business VMs on 10 x 4 TB where plan names 3-way mirrors."""
    args = ("10x4TB", "--workload", "vm", "--data", "business", "--json")
    planned = json.loads(run_cli("plan", *args).stdout)["recommendation"]
    reported = json.loads(run_cli("report", "--plan", *args).stdout)["recommendation"]
    assert reported["layout"] == planned["layout"] and "xmirror:3" in planned["layout"]
    assert reported["shortlist"] == planned["shortlist"]
