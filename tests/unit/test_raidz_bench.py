"""The CPU parity speed: the module's benchmark kstat parsed, and its place in the speed model."""

import math

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.model.performance import PRESETS, DiskProfile, HostLimits, parity_ceiling_mb_s, predict
from zfslab.system.profile import host_limits, profile_toml
from zfslab.system.raidz_bench import BENCH_COLUMNS, RaidzBenchError, parse_raidz_bench

NVME = PRESETS["nvme"]
HEADER = ("implementation   gen_p           gen_pq          gen_pqr         rec_p           rec_q           "
          "rec_r           rec_pq          rec_pr          rec_qr          rec_pqr")


def table(rows: dict[str, list[int]], fastest: list[str]) -> str:
    """A kstat in the module's layout: the kstat's own header line, the column names, the rows."""
    lines = ["18 0 0x01 -1 0 4862285785 129963495616", HEADER]
    lines += [f"{name:<17}" + "".join(f"{v:<16}" for v in values) for name, values in rows.items()]
    lines.append(f"{'fastest':<17}" + "".join(f"{f:<16}" for f in fastest))
    return "\n".join(lines) + "\n"


ROWS = {"original": [300_000_000, 180_000_000, 75_000_000] + [1] * 7,
        "scalar": [1_000_000_000, 260_000_000, 110_000_000] + [1] * 7,
        "avx2": [3_400_000_000, 1_280_000_000, 710_000_000] + [1] * 7}


def test_the_fastest_implementation_gives_data_rates_per_core():
    bench = parse_raidz_bench(table(ROWS, ["avx2"] * 10))
    assert bench.fastest == ("avx2", "avx2", "avx2")
    # the kstat divides the data by the 11 columns of its benchmark map: undo it
    assert bench.parity_mb_s() == pytest.approx((3400 * BENCH_COLUMNS, 1280 * BENCH_COLUMNS, 710 * BENCH_COLUMNS))
    mixed = parse_raidz_bench(table(ROWS, ["scalar", "avx2", "original"] + ["avx2"] * 7))
    assert mixed.parity_mb_s() == pytest.approx((1000 * 11, 1280 * 11, 75 * 11))


@pytest.mark.parametrize("text, message", [
    ("", "no 'implementation' header row"),
    (HEADER + "\nscalar 1 2 3 4 5 6 7 8 9 10\n", "no 'fastest' row"),
    (table({"scalar": [1, 2, "x", 4, 5, 6, 7, 8, 9, 10]}, ["scalar"] * 10), "not a number"),
    (table({"scalar": [1] * 10}, ["avx2"] * 10), "'fastest' names avx2"),
    (table({"scalar": [0] * 10}, ["scalar"] * 10), "zero rate"),
    ("implementation rec_p rec_q\nfastest a b\n", "the header lacks gen_p"),
])
def test_tables_it_cannot_read_say_why(text, message):
    with pytest.raises(RaidzBenchError, match=message):
        parse_raidz_bench(text)


def test_without_a_module_the_host_has_no_parity_limit(tmp_path):
    assert host_limits(str(tmp_path / "no-kstat")) == HostLimits()
    kstat = tmp_path / "vdev_raidz_bench"
    kstat.write_text(table(ROWS, ["avx2"] * 10))
    assert host_limits(str(kstat)).parity_mb_s == pytest.approx((37400, 14080, 7810))


SLOW_CPU = HostLimits(parity_mb_s=(900.0, 500.0, 300.0), cpus=2)


def test_parity_caps_raidz_writes_and_nothing_else():
    for text in ("24xdisk", "12xmirror:2"):
        assert predict(parse_layout(text), NVME, SLOW_CPU) == predict(parse_layout(text), NVME)
    assert predict(parse_layout("raidz1:12"), NVME, SLOW_CPU).write_mb_s == pytest.approx(1800)
    assert predict(parse_layout("raidz3:12"), NVME, SLOW_CPU).write_mb_s == pytest.approx(600)
    assert predict(parse_layout("draid2:8d:24c:1s"), NVME, SLOW_CPU).write_mb_s == pytest.approx(1000)
    # reads need no parity: unchanged
    assert predict(parse_layout("raidz3:12"), NVME, SLOW_CPU).read_mb_s == predict(parse_layout("raidz3:12"), NVME).read_mb_s
    # slow disks never reach a fast CPU's ceiling
    hdd = PRESETS["hdd7200"]
    assert predict(parse_layout("raidz2:6"), hdd, SLOW_CPU).write_mb_s == predict(parse_layout("raidz2:6"), hdd).write_mb_s


def test_a_mixed_pool_adds_the_cpu_time_of_each_byte():
    # 4 data disks each on a raidz1 and a raidz3 vdev (no padding at 128K): half the bytes at 1800, half at 600 MB/s
    layout = parse_layout("raidz1:5+raidz3:7")
    assert parity_ceiling_mb_s(layout, SLOW_CPU) == pytest.approx(1 / (0.5 / 1800 + 0.5 / 600))
    assert parity_ceiling_mb_s(parse_layout("raidz1:5+mirror:2"), SLOW_CPU) == pytest.approx(1800 / 0.8)
    assert math.isinf(parity_ceiling_mb_s(parse_layout("3xmirror:2"), SLOW_CPU))


def test_the_profile_carries_its_host_into_plan(run_cli, tmp_path):
    profile = DiskProfile("fast", 3000, 2500, 12_000, 90_000, 80_000, 0.1, 1.0, None, "test", SLOW_CPU)
    path = tmp_path / "p.toml"
    path.write_text(profile_toml(profile))
    assert "[host]" in path.read_text()
    from zfslab.commands._common import load_disk_model
    assert load_disk_model(str(path)) == profile
    rows = {r["layout"]: r for r in __import__("json").loads(
        run_cli("plan", "12x4TB", "--layouts", "raidz3:12,12xdisk", "--json", "--disk-type", str(path)).stdout)["layouts"]}
    assert rows["raidz3:12"]["speed"]["write_mb_s"] == pytest.approx(600)
    assert rows["12xdisk"]["speed"]["write_mb_s"] == pytest.approx(12 * 2500)


@pytest.mark.parametrize("host, message", [
    ("[host]\nparity_mb_s = [1, 2]\n", "parity_mb_s(=[1.0, 2.0]) must be three rates"),
    ("[host]\ncpus = 0\n", "cpus(=0) must be at least 1"),
    ("[host]\nparity = 3\n", "[host] has unknown key 'parity'"),
    ("host = 3\n", "[host] must be a table"),
])
def test_bad_host_sections_are_one_line_errors(run_cli, tmp_path, host, message):
    path = tmp_path / "p.toml"
    path.write_text('seq_read_mb_s = 100\nseq_write_mb_s = 90\nrand_read_iops_qd1 = 70\nrand_read_iops_qd8 = 120\n'
                    'rand_write_iops = 150\nsync_write_ms = 15\n' + host)
    r = run_cli("plan", "8x12TB", "--disk-model", str(path))
    assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1


def test_profile_json_has_no_infinity():
    import json

    from zfslab.system.profile import profile_dict
    d = json.loads(json.dumps(profile_dict(PRESETS["hdd7200"]), allow_nan=False))
    assert d["host"]["parity_mb_s"] == [None, None, None] and d["host"]["cpus"] == 1
