"""bench --layouts calibration: the layouts the calibration design picks from plan's list, and the
dry run says what each one pins (docs/bench.md#calibration)."""

import json

from zfslab.model.calibration import calibration_design
from zfslab.model.candidates import candidate_layouts


def test_the_dry_run_lists_the_design_and_then_only_its_layouts(run_cli, tmp_path):
    sandbox, db = tmp_path / "s", tmp_path / "r.sqlite"
    r = run_cli("bench", "--sandbox", str(sandbox), "--sandbox-disks", "6", "--layouts", "calibration",
                "--db", str(db), "--dry-run", "--repeats", "1")
    assert r.exit_code == 0, r.stderr
    picks = calibration_design(candidate_layouts(6))
    lines = r.stdout.splitlines()
    assert lines[0] == (f"# calibration: {len(picks)} of the {len(candidate_layouts(6))} layouts plan lists for 6 disks "
                        "(docs/speed.md#calibration-design); plan --db fits the speed model on them")
    assert lines[1:1 + len(picks)] == [f"# {p.layout}: {p.rule}; pins {', '.join(p.pins)}" for p in picks]
    assert lines[1] == ("# 6xdisk: one disk; pins disk_write_mb_s, disk_read_mb_s, disk_rewrite_mb_s, "
                        "disk_read_iops_qd1, read_modify_write, sync_write_ms")
    creates = [line for line in lines if line.startswith("zpool create")]
    assert len(creates) == len(picks) == 6
    assert [c.split(" zfslab-bench ")[1].split()[0] for c in creates[1:]] == \
        ["raidz3", "raidz2", "raidz1", "draid1:4d:6c:0s", "raidz1"]
    assert not sandbox.exists() and not db.exists()  # a dry run makes nothing


def test_the_json_dry_run_names_each_pick_and_what_it_pins(run_cli, tmp_path):
    r = run_cli("bench", "--sandbox", str(tmp_path / "s"), "--sandbox-disks", "8", "--layouts", "calibration",
                "--db", str(tmp_path / "r.sqlite"), "--dry-run", "--json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    picks = calibration_design(candidate_layouts(8))
    assert data["layouts"] == [str(p.layout) for p in picks]
    assert data["calibration"] == [{"layout": str(p.layout), "rule": p.rule, "pins": list(p.pins)} for p in picks]
    assert {s["layout"] for s in data["steps"] if s["kind"] == "create"} == set(data["layouts"])
    assert len(picks) <= -(-len(candidate_layouts(8)) // 3)  # a third at most: the rest check the fit


def test_named_layouts_print_no_calibration_lines(run_cli, tmp_path):
    r = run_cli("bench", "--sandbox", str(tmp_path / "s"), "--layouts", "mirror:2", "--dry-run", "--repeats", "1")
    assert r.exit_code == 0 and not r.stdout.startswith("# calibration")
    r = run_cli("bench", "--sandbox", str(tmp_path / "s"), "--layouts", "mirror:2", "--dry-run", "--json")
    assert "calibration" not in json.loads(r.stdout)
