"""report on a database merged from several hosts: each host's median beside the merged figure,
and a host more than 15 % below its peers' median flagged (model/per_host.py)."""

import json
import sqlite3
from dataclasses import replace

import pytest

from tests.fleet_data import RunSpec, write_db
from zfslab.model.per_host import HostMeasurement, fleet_spread, per_host
from zfslab.store.merge import merge

M = (("raidz2:6", "seqread", 0), ("raidz2:6", "seqread", 1), ("mirror:2", "randread-4k-t1q1", 0))


def _host_db(path, host, scale, started="2026-11-01T10:00:00+00:00"):
    """One host's results: 200 MB/s and 1,000 IOPS, times `scale`."""
    write_db(path, [RunSpec(f"u-{host}", host, started, M)])
    conn = sqlite3.connect(path)
    conn.execute("UPDATE measurements SET read_mb_s = ?, write_mb_s = NULL, read_iops = ?, write_iops = NULL",
                 (200.0 * scale, 1000.0 * scale))
    conn.commit()
    conn.close()


@pytest.fixture
def merged(tmp_path):
    paths = []
    for host, scale in (("st01", 1.0), ("st02", 1.02), ("st03", 0.7)):
        paths.append(str(tmp_path / f"{host}.sqlite"))
        _host_db(paths[-1], host, scale)
    out = str(tmp_path / "all.sqlite")
    assert merge(paths, out).origins == ("st01", "st02", "st03")
    return out


def test_report_json_sets_each_host_beside_the_merged_figure_and_flags_the_slow_one(merged, run_cli):
    r = run_cli("report", "--db", merged, "--json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)["per_host"]
    assert data["hosts"] == ["st01", "st02", "st03"]
    seq = next(row for row in data["rows"] if row["test"] == "seqread")
    assert seq["unit"] == "MB/s" and seq["by_host"] == {"st01": 200.0, "st02": 204.0, "st03": 140.0}
    assert seq["merged"] == 200.0   # the median of all six measurements, every host's runs together
    assert [f["line"] for f in seq["flagged"]] == [
        "st03: raidz2:6 seqread 140 MB/s, 30% below the median 200 MB/s of 3 hosts"]
    rand = next(row for row in data["rows"] if row["test"] == "randread-4k-t1q1")
    assert rand["unit"] == "IOPS" and rand["by_host"]["st03"] == 700.0 and len(rand["flagged"]) == 1


def test_the_html_report_has_the_per_host_table(merged, run_cli, tmp_path):
    page = tmp_path / "r.html"
    r = run_cli("report", "--db", merged, "--html", str(page))
    assert r.exit_code == 0, r.stderr
    text = page.read_text()
    assert 'id="per-host"' in text and "each host's median beside the merged figure (3 hosts)" in text
    assert "140 ▼30%" in text and "st03: raidz2:6 seqread 140 MB/s, 30% below the median 200 MB/s of 3 hosts" in text


def test_one_host_has_no_per_host_section(tmp_path, run_cli):
    db = str(tmp_path / "one.sqlite")
    _host_db(db, "st01", 1.0)
    r = run_cli("report", "--db", db, "--json")
    assert json.loads(r.stdout)["per_host"] == {"hosts": [], "threshold": 0.15, "spread": None, "rows": []}


def test_hosts_within_the_threshold_are_not_flagged():
    bench = [HostMeasurement(f"h{i}", "mirror:2", "seqwrite", None, v, None, None)
             for i, v in zip(range(1, 5), (100.0, 90.0, 86.0, 84.0))]
    hosts, rows = per_host([f"h{i}" for i in range(1, 5)], bench)
    assert hosts == ["h1", "h2", "h3", "h4"] and rows[0].merged == 88.0
    assert [f.host for f in rows[0].flags] == []   # 84 is 4.5 % below the median 88
    _, rows = per_host([f"h{i}" for i in range(1, 5)], bench[:3] + [replace(bench[3], write_mb_s=70.0)])
    assert [(f.host, round(f.below, 3)) for f in rows[0].flags] == [("h4", 0.205)]


def test_a_measurement_without_a_host_counts_nowhere_and_a_host_without_one_keeps_its_column():
    bench = [HostMeasurement("h1", "raidz1:3", "randread-4k-t8q8", 900.0, None, 2000.0, 500.0),
             HostMeasurement("h2", "raidz1:3", "randread-4k-t8q8", 800.0, None, 1000.0, 500.0),
             HostMeasurement(None, "raidz1:3", "randread-4k-t8q8", 1.0, None, 9.0, 9.0),   # a run naming no host
             HostMeasurement("", "raidz1:3", "randread-4k-t8q8", 1.0, None, 9.0, 9.0)]
    hosts, rows = per_host(["h1", "h2", None, "", "h3"], bench)
    assert hosts == ["h1", "h2", "h3"]   # h3's run measured nothing: its column is there, empty
    (row,) = rows
    # a 4K test's figure is its IOPS, read and write added
    assert (row.unit, row.by_host, row.merged) == ("IOPS", (("h1", 2500.0), ("h2", 1500.0)), 2000.0)


@pytest.fixture
def two_hosts(tmp_path):
    """bench --hosts st01,st02 --every-host: both hosts measured the same layouts, st02 20 % slower."""
    paths = []
    for host, scale in (("st01", 1.0), ("st02", 0.8)):
        paths.append(str(tmp_path / f"{host}.sqlite"))
        _host_db(paths[-1], host, scale)
    out = str(tmp_path / "all.sqlite")
    merge(paths, out)
    return out


def test_report_json_gives_the_spread_of_two_hosts_that_measured_the_same_layouts(two_hosts, run_cli):
    r = run_cli("report", "--db", two_hosts, "--json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)["per_host"]
    rows = {(row["layout"], row["test"]): row for row in data["rows"]}
    assert set(rows) == {("raidz2:6", "seqread"), ("mirror:2", "randread-4k-t1q1")}
    seq = rows[("raidz2:6", "seqread")]
    assert seq["by_host"] == {"st01": 200.0, "st02": 160.0} and seq["flagged"] == []   # two hosts: no median rule
    assert seq["spread"] == {"hosts": 2, "max_over_min": pytest.approx(1.25), "cv": pytest.approx(20 / 180),
                             "slowest": "st02", "fastest": "st01"}
    assert rows[("mirror:2", "randread-4k-t1q1")]["spread"]["max_over_min"] == pytest.approx(1.25)
    assert data["spread"]["rows"] == 2 and data["spread"]["median_max_over_min"] == pytest.approx(1.25)
    assert data["spread"]["line"] == ("2 hosts measured the same 2 layout × test: 1.25× apart (fastest/slowest; "
                                      "CV 11.1%) in the median row, at most 1.25× (raidz2:6 seqread, st02 slowest)")


def test_the_html_per_host_table_shows_the_spread_and_the_slowest_host(two_hosts, run_cli, tmp_path):
    page = tmp_path / "r.html"
    assert run_cli("report", "--db", two_hosts, "--html", str(page)).exit_code == 0
    text = page.read_text()
    table = text.split('id="per-host"')[1].split("</table>")[0]
    assert ">max/min<" in table and ">CV<" in table and ">slowest<" in table
    assert "1.25×" in table and "11.1%" in table and ">st02<" in table
    assert '<p class="host-spread">2 hosts measured the same 2 layout × test' in text


def test_a_row_one_host_measured_has_no_spread():
    bench = [HostMeasurement("h1", "mirror:2", "seqwrite", None, 100.0, None, None),
             HostMeasurement("h2", "raidz1:3", "seqwrite", None, 90.0, None, None),
             HostMeasurement("h2", "mirror:2", "seqwrite", None, 0.0, None, None)]
    _, rows = per_host(["h1", "h2"], bench)
    assert [r.spread for r in rows] == [None, None]   # a median of 0 has no ratio; one host, no spread
    assert fleet_spread(["h1", "h2"], rows) is None
