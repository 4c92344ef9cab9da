"""`zfslab pool`'s error paths, through stand-in `zpool`/`zfs`/`lsblk` programs on PATH that print
captured output (the real path runs in the guest: tests/e2e/inside/test_pool.py)."""

from __future__ import annotations

import json
import pathlib
import shlex
import stat

import pytest

from zfslab.cli import main
from zfslab.system.live_pool import READ_ONLY

DATA = pathlib.Path(__file__).parent.parent / "data" / "pools" / "zfs-2.4" / "healthy"

# each stand-in logs its argv, then prints the captured file for it
FAKE = """#!/bin/sh
echo "$(basename "$0") $*" >> {log}
case "$(basename "$0") $*" in
  "zpool list -H -o name") echo healthy ;;
  "zfs version") printf 'zfs-2.4.4-1~bpo13+1\\nzfs-kmod-2.4.4-1~bpo13+1\\n' ;;
  "zpool get -Hp ashift,psize healthy all-vdevs") grep -P '\\t(ashift|psize)\\t' {data}/zpool_get_vdevs_Hp.txt ;;
  "zpool status -D -j -P --json-int healthy") cat {status} ;;
  "zpool get -j --json-int all healthy") cat {data}/zpool_get_j.json ;;
  "zfs get -j --json-int all healthy") cat {data}/zfs_get_j.json ;;
  # the root's every property stands for zfs get -r of its one filesystem (the pool has no other)
  "zfs get -j --json-int -r -t filesystem recordsize,compression,mountpoint healthy") cat {data}/zfs_get_j.json ;;
  lsblk*) echo '{{"blockdevices": []}}' ;;
  "smartctl -j -a "*) cat {smart} ;;
  *) echo "unexpected: $*" >&2; exit 1 ;;
esac
"""


def fake_tools(tmp_path: pathlib.Path, status: pathlib.Path = DATA / "zpool_status_jP.json",
               smart: pathlib.Path | None = None, data: pathlib.Path = DATA) -> pathlib.Path:
    """The stand-ins on a new PATH; with `smart`, a smartctl that prints that report for every disk; `data`:
    another captured pool's directory (the pool named as it)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("zpool", "zfs", "lsblk") + (("smartctl",) if smart else ()):
        path = bin_dir / name
        path.write_text(FAKE.replace("healthy", data.name).format(log=shlex.quote(str(tmp_path / "argv.log")),
                                                                  data=shlex.quote(str(data)),
                                    status=shlex.quote(str(status)), smart=shlex.quote(str(smart))))
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return bin_dir


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    def use(**kw):
        monkeypatch.setenv("PATH", f"{fake_tools(tmp_path, **kw)}:/usr/bin:/bin")
        return tmp_path / "argv.log"
    return use


def test_every_command_it_runs_only_reads(on_path, capsys):
    log = on_path()
    assert main(["pool", "healthy", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["pools"][0]
    assert record["model"]["agrees"] is True
    ran = log.read_text().splitlines()
    assert len(ran) == 7 + 7  # zpool and zfs (zfs get -r too), then lsblk for each of the 7 disks
    assert all(any(line.split()[:len(r)] == list(r) for r in READ_ONLY) for line in ran), ran


def test_a_pool_that_does_not_exist_names_it_and_the_fix(on_path, capsys):
    on_path()
    assert main(["pool", "nosuchpool"]) == 5
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["zfslab: error: pool 'nosuchpool' does not exist; `zpool list` shows the pools there are"]


def test_no_zpool_on_path(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["pool"]) == 3
    err = capsys.readouterr().err
    assert "zpool is not installed or not on PATH" in err and len(err.strip().splitlines()) == 1


def test_garbage_from_zpool_is_one_line_exit_2(on_path, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"pools": {"healthy": {"vdevs": {"healthy": {"name": "healthy", "vdev_type": "root", '
                   '"vdevs": {"d": {"name": "d", "vdev_type": "disk", "read_errors": "lots"}}}}}}}')
    on_path(status=bad)
    assert main(["pool", "healthy"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "read_errors: lots is not a whole number" in err[0] and "Traceback" not in err[0]



def test_lsblk_json_as_util_linux_prints_it_and_bad_values():
    from zfslab.errors import InputError
    from zfslab.system.live_pool import disk_facts
    text = (pathlib.Path(__file__).parent.parent / "data" / "lsblk" / "vda-util-linux-2.38.json").read_text()
    facts = disk_facts(text)["/dev/vda"]
    assert (facts.size_bytes, facts.physical_sector_bytes, facts.rotational) == (274877906944, 4096, True)
    old = '{"blockdevices": [{"path": "/dev/sda", "size": "1000", "phy-sec": "512", "rota": "0"}]}'
    assert disk_facts(old)["/dev/sda"].rotational is False
    for bad in ('{"blockdevices": [{"path": "/dev/sda", "size": 1, "phy-sec": 3000, "rota": 0}]}',
                '{"blockdevices": [{"path": "/dev/sda", "size": -1, "phy-sec": 512, "rota": 0}]}',
                '{"blockdevices": [{"path": "/dev/sda", "size": 1, "phy-sec": 512, "rota": 2}]}', "[]"):
        with pytest.raises(InputError):
            disk_facts(bad)


def test_add_prints_each_way_with_its_commands_whole_at_80_columns(on_path, capsys, monkeypatch):
    on_path()
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["pool", "healthy", "--add", "6x2GiB"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line == "with 6 new disks of 2.15 GB:")
    text = " ".join(" ".join(lines[start:]).split())   # the wrapped prose joined again
    ways = [line for line in lines[start:] if line.startswith("- ")]
    assert ways[0].startswith("- zpool add raidz2:6, like the pool: +")
    assert "like the pool: +7.97 GB usable, 15.93 GB in all (SIZE 24.70 GB); survives 2 failed disks (pool raidz2:6+raidz2:6+spare:1)" in text
    assert "    zpool add healthy raidz2 NEW1 NEW2 NEW3 NEW4 NEW5 NEW6" in lines   # a command on one line
    assert ways[1].startswith("- zpool attach +6 disks to raidz2-0: +")
    assert all(len(line) <= 80 for line in lines[start:]), [line for line in lines[start:] if len(line) > 80]
    # 24 new disks: the add of one raidz2:24 is a command of 24 paths, continued with ` \`
    assert main(["pool", "healthy", "--add", "24x2GiB"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cut = [i for i, line in enumerate(lines) if line.startswith("    zpool add -f healthy raidz2 NEW1")]
    assert cut and lines[cut[0]].endswith(" \\") and all(len(line) <= 80 for line in lines)


def test_add_in_json_and_bad_disks_before_any_zpool(on_path, capsys):
    log = on_path()
    assert main(["pool", "healthy", "--add", "6x2GiB", "--json"]) == 0
    grown = json.loads(capsys.readouterr().out)["pools"][0]["growth"]
    assert grown["count"] == 6 and grown["options"][0]["adds"] == "raidz2:6" and grown["options"][0]["gain_bytes"] > 0
    log.unlink()
    assert main(["pool", "healthy", "--add", "6x2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "6x2" in err[0] and "6x2TB" in err[0]
    assert not log.exists()   # refused before zpool ran


def test_replace_with_prints_the_grown_pool_its_commands_and_json_and_refuses_a_bare_number(on_path, capsys,
                                                                                              monkeypatch):
    log = on_path()
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["pool", "healthy", "--replace-with", "4TB"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line == "with 6 new disks of 4.00 TB:")
    text = " ".join(" ".join(lines[start:]).split())
    assert "- zpool replace each of the 6 data disks: +" in text
    assert "survives 2 failed disks (pool raidz2:6+spare:1)" in text
    assert "the hot spare cannot stand in for a larger disk: replace it too" in text
    assert "    zpool set autoexpand=on healthy" in lines
    at = lines.index("    zpool replace -w healthy \\")   # 80 columns: continued with ` \`, never cut bare
    assert lines[at + 1].startswith("      /dev/disk/by-id/") and lines[at + 1].endswith("-part1 NEW1")
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert main(["pool", "healthy", "--replace-with", "4TB", "--json"]) == 0
    (option,) = json.loads(capsys.readouterr().out)["pools"][0]["replacement"]["options"]
    assert option["how"] == "zpool replace" and option["gain_bytes"] > 0 and option["resilver_hours"] >= 0
    log.unlink()
    assert main(["pool", "healthy", "--replace-with", "16"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "16" in err[0] and "16TB" in err[0]
    assert not log.exists()   # refused before zpool ran


def test_add_gives_each_way_its_risk_and_speed_and_recommends_one_by_plans_rule(on_path, capsys, monkeypatch):
    on_path()
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["pool", "healthy", "--add", "4x12TB"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line == "with 4 new disks of 12.00 TB:")
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = " ".join(" ".join(lines[start:]).split())
    ways = [line for line in lines[start:] if line.startswith("- ")]
    risks = [line for line in lines[start:] if line.startswith("    risk of losing the pool: ")]
    assert len(risks) == len(ways) == 6
    assert "within 1 year, 1 in" in text and "within 5 years; predicted write" in text
    assert "speed: plan's model has no term for special or log vdevs" in text
    assert ways[-1].startswith("- zpool add special=") and ways[-2].startswith("- zpool add log=")
    rec = next(line for line in lines[start:] if line.startswith("recommended, by plan's rule"))
    assert text.index("recommended, by plan's rule") > text.index("note: every `zpool add`")
    # home data takes one failure and plan's balance alone would add the raidz1:4; but the pool
    # survives two now, and the raidz2:4 keeps it so: the raidz1:4 and the mirrors are not ranked
    assert "--data home): zpool add raidz2:4." in text and ways[0].startswith("- zpool add raidz2:4:")
    assert "Not ranked: raidz1:4, 2xmirror:2, which would leave the pool surviving fewer failed disks" in text
    assert rec
    # business data asks for two: then neither the raidz1:4 nor the mirrors
    assert main(["pool", "healthy", "--add", "4x12TB", "--data", "business", "--json"]) == 0
    grown = json.loads(capsys.readouterr().out)["pools"][0]["growth"]
    first = grown["options"][0]
    assert first["recommended"] and first["adds"] == "raidz2:4" and grown["recommendation"]["option"] == "raidz2:4"
    assert grown["recommendation"]["data"] == "business" and grown["recommendation"]["min_failures"] == 2
    by = {o["adds"]: o for o in grown["options"]}
    assert by["raidz1:4"]["left_out"][0] == "survives 1 failure, 2 asked"   # and its P(loss) over the budget
    assert "vdev-less-redundant" in by["raidz1:4"]["left_out"][-1]
    assert by["raidz1:4"]["p_loss"]["5"] > 100 * by["raidz2:4"]["p_loss"]["5"]
    assert by["2xmirror:2"]["speed"]["rand_read_iops_qd8"] > by["raidz2:4"]["speed"]["rand_read_iops_qd8"]
    assert by["raidz2:4"]["speed_vs_now"]["write_mb_s"] == pytest.approx(
        by["raidz2:4"]["speed"]["write_mb_s"] / grown["speed_now"]["write_mb_s"])
    assert by["log=2xmirror:2"]["speed"] is None and grown["speed_disk_type"] == "hdd"
    assert main(["pool", "healthy", "--add", "4x12TB", "--data", "bogus"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bogus" in err[0] and "business" in err[0]


def _fleet_path(tmp_path, monkeypatch, *, answer: str | None = None):
    """The stand-in tools on PATH, and a `zfslab` there that runs this zfslab (LocalTransport runs
    each host's argv here, as ssh would run it there); `answer`: a zfslab that prints this instead."""
    import sys
    bin_dir = fake_tools(tmp_path)
    src = pathlib.Path(__file__).resolve().parents[2] / "src"
    body = (f"printf '%s' {shlex.quote(answer)}\n" if answer is not None else
            f"PYTHONPATH={shlex.quote(str(src))} exec {shlex.quote(sys.executable)} -m zfslab \"$@\"\n")
    (bin_dir / "zfslab").write_text("#!/bin/sh\n" + body)
    (bin_dir / "zfslab").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("COLUMNS", "80")


def test_hosts_reads_every_hosts_pools_into_one_table_and_names_a_host_gone(tmp_path, monkeypatch, capsys):
    """pool --hosts over LocalTransport: hosts a and b answer with their own `zfslab pool --json` (the
    captured healthy raidz2:6 through the stand-in tools), host c is down: the table has a and b, the
    failure is one line, and the exit code is the fleet's (4: a host gave no report)."""
    from zfslab.system import transport as transport_module
    _fleet_path(tmp_path, monkeypatch)
    monkeypatch.setattr("zfslab.commands._hosts.transport_from_args",
                        lambda args: transport_module.LocalTransport(down=["c"]))
    assert main(["pool", "--hosts", "a,b,c"]) == 4
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["host", "pool", "state", "layout", "model", "findings"]
    rows = [line.split() for line in lines[1:3]]
    assert rows == [["a", "healthy", "ONLINE", "raidz2:6+spare:1", "agrees", "none"],
                    ["b", "healthy", "ONLINE", "raidz2:6+spare:1", "agrees", "none"]]
    assert "no report from:" in out and "- c: host c" in out and "marked down" in out
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    assert main(["pool", "--hosts", "a,b", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [h["host"] for h in record["hosts"]] == ["a", "b"] and record["failures"] == []
    assert record["hosts"][0]["pools"][0]["model"]["agrees"] is True


@pytest.mark.parametrize("answer", ["not json", '{"pools": [{"pool": "t"}]}', '{"pools": [{"pool": "t", "state": '
                                    '"ONLINE", "model": {"agrees": "yes"}, "findings": []}]}', "[" * 100000])
def test_a_host_whose_answer_is_not_a_pool_report_is_one_line(tmp_path, monkeypatch, capsys, answer):
    from zfslab.system import transport as transport_module
    _fleet_path(tmp_path, monkeypatch, answer=answer)
    monkeypatch.setattr("zfslab.commands._hosts.transport_from_args", lambda args: transport_module.LocalTransport())
    assert main(["pool", "--hosts", "a"]) == 4
    out = capsys.readouterr().out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("- a: ")]
    assert len(line) < 300 and "Traceback" not in out


def test_hosts_with_add_is_refused_in_one_line(capsys):
    assert main(["pool", "--hosts", "a,b", "--add", "4x12TB"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--add is for one host's pool" in err[0]


def test_the_risk_now_is_printed_and_in_the_json(on_path, capsys, monkeypatch):
    on_path()
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["pool", "healthy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = " ".join(" ".join(lines).split())
    assert "risk of losing the pool (HDD failure and resilver rates, docs/pool.md#risk-now): 1 in" in text
    # nothing lowers it, and the one step left, more parity, a raidz cannot take in place: said only
    # above the strictest data level's budget, and the raidz2 of 2 GiB disks is far below it
    assert "- more parity:" not in text
    assert "- whether recordsize 128K suits the files under /healthy" in text
    assert main(["pool", "healthy", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["pools"][0]
    assert record["footprint_advice"].endswith("`zfslab footprint /healthy --recordsize 128K --layouts "
                                               "raidz2:6+spare:1 --compression lz4 --ashift 12` measures, against "
                                               "another --recordsize; pool reads no file")
    risk = record["risk"]
    assert risk["disk_class"] == "hdd" and 0 < risk["p_loss"]["1"] < risk["p_loss"]["5"] < 1
    assert risk["disks_out"] == 0 and risk["p_loss_repaired"] is None and risk["reason"] == ""
    assert risk["rate_basis"] == "class" and risk["rates"] == [] and "no SMART report was read" in risk["notes"][0]
    assert risk["parity_added"] is None and risk["parity_fixed"] == ["raidz2-0"]


def test_the_risk_by_the_disks_ages_names_each_rate_in_text_and_json(on_path, capsys, monkeypatch):
    """Every disk answers with the captured 28,712-hour report of one model: one batch of 3.3-year-old
    disks (docs/pool.md#risk-now)."""
    log = on_path(smart=DATA.parent.parent.parent / "smartctl" / "ata-hdd-hours-only.json")
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["pool", "healthy"]) == 0
    out = capsys.readouterr().out
    text = " ".join(out.split())
    assert "risk of losing the pool (HDD failure rates by the disks' ages and resilver rates" in text
    assert ("- raidz2-0: by age: 3.3 y → AFR 2.1 % (1 y ahead), 3.3 % (5 y ahead); one batch: 6 × Example HDD 4TB "
            "within 720 power-on hours, so while failures are unrepaired the others fail faster (×1.29, ×1.58)") in text
    assert sum(line.startswith("smartctl -j -a ") for line in log.read_text().splitlines()) == 7
    assert main(["pool", "healthy", "--json"]) == 0
    risk = json.loads(capsys.readouterr().out)["pools"][0]["risk"]
    assert risk["rate_basis"] == "age" and risk["notes"] == []
    # a new disk in place of one: 3 % in its first months against these disks' 3 % past 4 y, and no batch with it
    assert risk["oldest_replaced"]["age_years"] == pytest.approx(28_712 / 8760)
    (rate,) = risk["rates"]
    assert rate["disks_aged"] == 6 and rate["batch"]["disks"] == 6 and rate["text"].startswith("raidz2-0: by age: 3.3 y")
    # one disk's age over time, cubed (raidz2): by hand, 0.72 y at 1.4 % and 0.28 y at 3.0 % the year ahead
    assert rate["afr"]["1"] == pytest.approx(0.021222, rel=1e-4) and rate["afr"]["5"] == pytest.approx(0.033144, rel=1e-4)
    print(out)   # with -s: the example output docs/pool.md#risk-now shows


def test_disks_smart_flags_raise_the_risk_at_80_columns_and_replacing_them_is_in_the_json(on_path, capsys,
                                                                                            monkeypatch):
    """Every disk answers with the captured failing report (offline uncorrectable sectors among its
    counters): each one's rate ×39 for 60 days, ×10 after (docs/reliability.md#flagged-disks)."""
    on_path(smart=DATA.parent.parent.parent / "smartctl" / "ata-failing-hdd.json")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["pool", "healthy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = " ".join(" ".join(lines).split())
    assert "6 disks have offline uncorrectable sectors: ×39 for 60 days, ×10 after" in text
    assert "- what lowers it most: replacing the 6 disks SMART flags with new ones: 1 in" in text
    assert main(["pool", "healthy", "--json"]) == 0
    risk = json.loads(capsys.readouterr().out)["pools"][0]["risk"]
    assert risk["rates"][0]["flagged"][0] == {"disk": risk["flagged_replaced"]["disks"][0],
                                              "counter": "offline uncorrectable sectors", "factor": 39.0,
                                              "days": 60, "after_factor": 10.0}
    assert len(risk["flagged_replaced"]["disks"]) == 6
    assert risk["flagged_replaced"]["p_loss"]["1"] < risk["p_loss"]["1"]


def test_a_third_side_for_a_mirror_is_offered_at_80_columns_and_in_the_json(on_path, capsys, monkeypatch, tmp_path):
    """The captured degraded mirror with its offline side back: one more side lowers every horizon."""
    data = DATA.parent / "degraded"
    status = json.loads((data / "zpool_status_jP.json").read_text())
    text = json.dumps(status).replace('"OFFLINE"', '"ONLINE"').replace('"DEGRADED"', '"ONLINE"')
    whole = json.loads(text)
    for key in ("status", "action"):
        del whole["pools"]["degraded"][key]
    (tmp_path / "whole.json").write_text(json.dumps(whole))
    on_path(status=tmp_path / "whole.json", data=data)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["pool", "degraded"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = " ".join(" ".join(lines).split())
    assert ("- what lowers it most: attaching one more side to mirror-0 (1 new disk, `zpool attach degraded DISK "
            "NEW`): 1 in") in text
    assert main(["pool", "degraded", "--json"]) == 0
    risk = json.loads(capsys.readouterr().out)["pools"][0]["risk"]
    added = risk["parity_added"]
    assert added["vdevs"] == ["mirror-0"] and added["new_disks"] == 1 and risk["parity_fixed"] == []
    assert added["commands"] == ["zpool attach degraded scsi-0QEMU_QEMU_HARDDISK_ZFSLAB0000 NEW1"]
    assert all(added["p_loss"][y] < risk["p_loss"][y] for y in ("1", "5"))
