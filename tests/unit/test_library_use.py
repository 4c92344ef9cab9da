"""zfslab as a library user has it, in a few lines of Python and no command line (issue 37's
done-when): a footprint of a tree, and a fleet bench dry run. sqlite-utils' db.py can do every
verb of its CLI; these hold zfslab's library to the same for the commands that did their work
in the command layer."""

import os
import subprocess
import sys

from test_fleet_bench import fleet  # noqa: F401 - the fixture: each host is this machine, no ssh

from tests.conftest import REPO
from zfslab import __version__
from zfslab.model.footprint import Compression, data_footprint
from zfslab.model.inventory import Host
from zfslab.model.layout_grammar import parse_layout
from zfslab.system.bench_plan import BenchOptions
from zfslab.system.fleet_bench import FleetBenchRequest, host_dry_runs, plan_fleet, start_fleet
from zfslab.system.footprint_data import read_data
from zfslab.system.suites import suite_tests

LAYOUTS = ("mirror:2", "raidz1:3", "mirror:3", "raidz1:2")


def _tree(root) -> None:
    """Three files: text that compresses, 300 KiB of zeros (holes with compression on), 8 KiB that does not."""
    (root / "docs").mkdir()
    (root / "docs" / "a.txt").write_text("the same line again\n" * 5000)
    (root / "zeros.bin").write_bytes(bytes(300 * 1024))
    (root / "docs" / "random.bin").write_bytes(os.urandom(8192))


def test_a_footprint_from_python(tmp_path):
    _tree(tmp_path)
    reading = read_data([str(tmp_path)], compression="gzip", recordsize_bytes=128 * 1024)
    data = reading.blocks
    assert (data.files, data.directories, data.complete) == (3, 2, True)
    assert reading.notes["files_read"] == 3 and reading.sampled_records == ()
    fp = data_footprint(data, parse_layout("raidz2:6"), 12, Compression(on=True))
    assert fp.logical_bytes == 100_352 + 3 * 128 * 1024 + 8192   # each file in whole 512 B units or records
    assert fp.compression_ratio > 2 and fp.holes == 3             # the zeros' three records are holes
    assert fp.total_used_bytes < fp.logical_bytes


def test_the_footprint_library_needs_no_command_line(tmp_path):
    """The same few lines in a fresh Python import neither cli.py, the commands nor argparse."""
    _tree(tmp_path)
    code = ("import sys\nfrom zfslab.system.footprint_data import read_data\n"
            "from zfslab.model.footprint import Compression, data_footprint\n"
            "from zfslab.model.layout_grammar import parse_layout\n"
            f"data = read_data([{str(tmp_path)!r}], compression='off').blocks\n"
            "print(round(data_footprint(data, parse_layout('mirror:2'), 12, Compression(False)).total_used_bytes))\n"
            "print(' '.join(sorted(m for m in sys.modules if m == 'argparse' or m.startswith(('zfslab.cli', "
            "'zfslab.commands')))))")
    env = os.environ | {"PYTHONPATH": os.path.join(REPO, "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    used, imported = (done.stdout.split("\n") + [""])[:2]
    assert int(used) > 0 and imported == ""


def _request(tmp_path, hosts=("h1", "h2")) -> FleetBenchRequest:
    options = BenchOptions("quick", tuple(suite_tests("quick")), repeats=1, size="64m", runtime_s=2, ramp_s=0)
    return FleetBenchRequest(tuple(Host(h, h) for h in hosts), ("/dev/sdb", "/dev/sdc", "/dev/sdd"),
                             tuple(parse_layout(x) for x in LAYOUTS), options, str(tmp_path / "all.sqlite"),
                             str(tmp_path / "remote" / "{host}.sqlite"))


def test_a_fleet_bench_planned_from_python_touches_no_host(tmp_path):
    """The split and each host's command lines, from typed values alone: no transport at all."""
    request = _request(tmp_path)
    plan = plan_fleet(request)
    assert sorted(plan.queue("h1") + plan.queue("h2")) == sorted(LAYOUTS) and plan.queue("h1") and plan.queue("h2")
    assert plan.render()[0].startswith("# fleet: 4 layouts on 2 hosts, predicted ")
    argv = request.bench_argv(request.hosts[0], plan.queue("h1")[:1], dry_run=True)
    assert argv[:4] == ["zfslab", "bench", "--disks", "/dev/sdb,/dev/sdc,/dev/sdd"] and argv[-1] == "--dry-run"
    assert argv[argv.index("--origin") + 1] == "h1" and "--wipe" not in argv
    assert not os.listdir(tmp_path)


def test_a_fleet_bench_dry_run_from_python(fleet, tmp_path):  # noqa: F811 - the fixture imported above
    """Preflight, plan and each host's own dry run, through a transport that runs the hosts' commands
    on this machine (tests/unit/test_fleet_bench.py's fake fleet): nothing is written anywhere."""
    request = _request(tmp_path)
    before = sorted(os.listdir(tmp_path))
    start = start_fleet(fleet, request, controller_version=__version__, dry_run=True)
    assert start.refusals == () and start.refused == () and start.pull_failures == ()
    runs = host_dry_runs(fleet, start.plan, first_only=False)
    assert [d.host for d in runs] == ["h1", "h2"] and all(d.exit_code == 0 for d in runs)
    assert all(f"# fake plan of {d.host}" in d.output for d in runs)
    assert sum(len(d.commands) for d in runs) == len(LAYOUTS)
    assert sorted(os.listdir(tmp_path)) == before
