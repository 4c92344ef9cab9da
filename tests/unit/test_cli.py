"""The command line: outputs, one-line errors with exit codes, help on every command."""

import csv
import os
import re
import io
import json
import subprocess
import sys

import pytest

from zfslab import __version__


def test_version(run_cli):
    with pytest.raises(SystemExit) as e:
        run_cli("--version")
    assert e.value.code == 0


def test_version_from_the_installed_script():
    out = subprocess.run([sys.executable, "-m", "zfslab", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"zfslab {__version__}"


def _commands() -> list[str]:
    from zfslab.cli import build_parser
    return list(next(a for a in build_parser()._actions if a.dest == "command").choices)


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help(run_cli, capsys, command):
    """--help exits 0, names every option of the command and shows an example of it; no format
    escape shows through (argparse formats help strings, never a description: '%%' stays '%%')."""
    from zfslab.cli import build_parser
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices[command]
    with pytest.raises(SystemExit) as e:
        run_cli(command, "--help")
    assert e.value.code == 0
    text = capsys.readouterr().out
    options = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
    assert "--help" in options and [o for o in options if o not in text] == []
    assert f"example: zfslab {command}" in text
    assert "%%" not in text


def test_plan_table_shows_the_short_list_and_all_shows_every_layout(run_cli):
    r = run_cli("plan", "24x4TB")
    assert r.exit_code == 0 and r.stderr == ""
    assert "★ Recommended: 4xraidz2:6" in r.stdout and "--all shows them" in " ".join(r.stdout.split())  # prose wraps
    assert "2xraidz2:12" not in r.stdout.split("★ Recommended")[0]  # wider than OpenZFS advises: not listed
    every = run_cli("plan", "24x4TB", "--all", "--wide")
    assert "2xraidz2:12" in every.stdout and "72.96" in every.stdout  # usable TB of 2 x raidz2(12) on 24 x 4 TB
    table = every.stdout.split("★ Recommended")[0]
    assert sum(line.lstrip("★◆ ").startswith(("draid", "raidz", "2x", "3x", "4x", "6x", "8x", "11x", "12x", "24x"))
               for line in table.splitlines()) == 47


def test_plan_json_rows_have_self_explaining_keys(run_cli):
    out = json.loads(run_cli("plan", "24x4TB", "--json").stdout)
    rows = out["layouts"]
    assert len(rows) == 47
    assert out["recommendation"]["layout"] == "4xraidz2:6" and out["recommendation"]["reason"].startswith("4xraidz2:6")
    assert out["recommendation"]["horizon_years"] == 5 and out["recommendation"]["data"] == "home"
    assert sum(r["recommended"] for r in rows) == 1
    row = next(r for r in rows if r["layout"] == "raidz2:24")
    # what real OpenZFS 2.1 gives 24 x 4e12-byte vdevs (tests/data/golden_capacity.csv): the few
    # MiB a whole disk's GPT partitioning takes are lost in the 16 GiB metaslab rounding anyway
    assert row["usable_bytes"] == 85_160_779_317_248
    for key in ("layout", "shape", "usable_bytes", "usable_tb", "usable_tib", "efficiency",
                "failures_guaranteed", "failures_best_case", "size_bytes", "raw_bytes"):
        assert key in row
    assert row["failures_guaranteed"] == 2 and row["raw_bytes"] == 24 * 4 * 10**12


def test_plan_csv_equals_json(run_cli):
    rows = json.loads(run_cli("plan", "8x12TB", "--json").stdout)["layouts"]
    table = list(csv.DictReader(io.StringIO(run_cli("plan", "8x12TB", "--csv").stdout)))
    assert [r["layout"] for r in table] == [r["layout"] for r in rows]
    assert [int(r["usable_bytes"]) for r in table] == [r["usable_bytes"] for r in rows]
    # one flat column per figure: risk per horizon, speed per metric; no JSON inside a cell
    for row, obj in zip(table, rows):
        assert not any(v.startswith(("{", "[")) for v in row.values())
        for y in ("1", "5", "10"):
            # three significant figures in the CSV (the inputs have one or two), exact in JSON
            assert float(row[f"p_loss_{y}y"]) == pytest.approx(obj["p_loss"][y], rel=5e-3)
            assert float(row[f"p_damage_{y}y"]) == pytest.approx(obj["p_damage"][y], rel=5e-3)
        assert float(row["write_mb_s"]) == pytest.approx(obj["speed"]["write_mb_s"], abs=0.05)
        assert float(row["write_mb_s_x"]) == pytest.approx(obj["speed_x_single_disk"]["write_mb_s"], abs=0.005)
    assert [r["recommended"] for r in table].count("True") == 1


def test_plan_options_agree_with_the_positional_form(run_cli):
    a = json.loads(run_cli("plan", "8x12TB", "--json").stdout)
    b = json.loads(run_cli("plan", "--disks", "8", "--disk-size", "12TB", "--json").stdout)
    assert a == b
    # 128 metaslabs of 512 MiB plus the labels: the ~9 MiB the Linux partitioning takes costs one
    size = str(128 * 2**29 + 4608 * 1024)
    whole = json.loads(run_cli("plan", f"2x{size}", "--json").stdout)["layouts"]
    exact = json.loads(run_cli("plan", "--disks", "2", "--vdev-bytes", size, "--json").stdout)["layouts"]
    assert exact[0]["size_bytes"] - whole[0]["size_bytes"] == 2 * 2**29


def test_plan_of_chosen_layouts_and_versions(run_cli):
    rows = json.loads(run_cli("plan", "24x4TB", "--layouts", "2xraidz2:12,4xraidz2:6", "--zfs-version", "0.8",
                              "--json").stdout)["layouts"]
    assert [r["layout"] for r in rows] == ["2xraidz2:12", "4xraidz2:6"]


def test_capacity_json(run_cli):
    r = run_cli("capacity", "raidz2:6", "--disk-size", "4000787030016", "--json")
    obj = json.loads(r.stdout)
    assert obj["size_bytes"] == 24_000_277_250_048
    assert obj["usable_bytes"] == 15_847_120_699_392
    assert obj["slop_bytes"] == 125_996_892_160
    assert obj["raw_bytes"] == 6 * 4_000_787_030_016
    assert obj["efficiency"] == pytest.approx(15_847_120_699_392 / (6 * 4_000_787_030_016), rel=1e-6)
    assert obj["zfs_list_size"] == "14.4T" and obj["zpool_list_size"] == "21.8T"


def test_capacity_file_and_recordsize(run_cli):
    obj = json.loads(run_cli("capacity", "raidz1:5", "--vdev-bytes", "1TB", "--recordsize", "16K",
                             "--file-size", "256MiB", "--json").stdout)
    assert obj["file"]["physical_bytes"] == 402_653_184
    assert obj["recordsize_efficiency"] == pytest.approx(4 / 6, abs=1e-6)


def test_capacity_text_shows_tb_and_tib(run_cli):
    out = run_cli("capacity", "raidz2:6", "--disk-size", "4TB").stdout
    assert "TB" in out and "TiB" in out and "zfs list USED+AVAIL" in out


def test_layout_from_zpool_prints_the_create_command(run_cli):
    r = run_cli("layout", "--from-zpool", "mirror sda sdb mirror sdc sdd", "--ashift", "12")
    assert "2xmirror:2" in r.stdout
    assert "zpool create -o ashift=12 tank mirror sda sdb mirror sdc sdd" in r.stdout


def test_layout_json_with_devices(run_cli):
    obj = json.loads(run_cli("layout", "raidz1:3", "--devices", "a,b,c", "--json").stdout)
    assert obj["zpool_create"] == ["zpool", "create", "tank", "raidz1", "a", "b", "c"]


@pytest.mark.parametrize("args,message,code", [
    (["capacity", "raidz3:3", "--disk-size", "4TB"],
     "zfslab: error: raidz3:3: a raidz3 vdev needs more disks than its parity (3): at least raidz3:4\n", 2),
    (["plan", "24x4T"], "zfslab: error: bad size '4T': 'T' is ambiguous: write 4TB (10^n) or 4TiB (2^n)\n", 2),
    (["plan", "--ashift", "20"],
     "zfslab: error: argument --ashift: --ashift must be from 9 to 16, got 20 (see zfslab plan --help)\n", 2),
    (["plan", "24 disks"], "zfslab: error: cannot read disks '24 disks': write COUNTxSIZE, e.g. 24x4TB or 8x12TB\n", 2),
    (["plan", "--disk-size", "4TB"], "zfslab: error: say how many disks with --disks N (or write COUNTxSIZE, e.g. 24x4TB)\n", 2),
    (["capacity", "raidz2:6", "--disk-size", "4TB", "--zfs-version", "9.9"],
     "zfslab: error: unknown OpenZFS version '9.9'; use one of: slop64, 0.6.5, 0.7, 0.8, 2.1, 2.3.7, 2.4.0, 2.4\n", 2),
    (["capacity", "raidz2:6"], "zfslab: error: say the size of each disk, e.g. zfslab capacity raidz2:6 --disk-size 4TB "
                               "(or --vdev-bytes N for exact vdev bytes)\n", 2),
    # issue 23: errors say what to type
    (["plan", "24x4"], "zfslab: error: cannot read disks '24x4': 4 bytes is no disk; give the unit, e.g. 24x4TB\n", 2),
    (["plan", "12x500"], "zfslab: error: cannot read disks '12x500': 500 bytes is no disk; give the unit, e.g. 12x500GB\n", 2),
    (["plan", "24", "4TB"], "zfslab: error: write the disks as one word: zfslab plan 24x4TB (see zfslab plan --help)\n", 2),
    (["plan", "24"], "zfslab: error: cannot read disks '24': say their size too, e.g. 24x4TB\n", 2),
    (["capacity", "raidz2:6", "--disk-size", "4"],
     "zfslab: error: argument --disk-size: 4 bytes is no disk; give the unit, e.g. 4TB (see zfslab capacity --help)\n", 2),
    (["plan", "24x4TB", "--layouts", "raidz2:6"], "zfslab: error: layout raidz2:6 uses 6 disks but the plan has 24\n", 2),
    (["capacity", "disk", "--vdev-bytes", "1MB"],
     "zfslab: error: a vdev of 1,000,000 bytes is below ZFS's minimum device size of 64 MiB (67,108,864 bytes as "
     "ZFS sees it): give disks of at least 76,562,944 bytes (73.0 MiB), which zpool partitions to that\n", 2),
    (["layout", "raidz2:6", "--devices", "a,b,c"], "zfslab: error: raidz2:6 needs 6 devices, got 3\n", 2),
])
def test_bad_input_is_one_line_on_stderr_with_exit_code(run_cli, args, message, code):
    r = run_cli(*args)
    assert (r.exit_code, r.stdout) == (code, "")
    assert r.stderr == message


def test_choices_take_any_case_where_the_meaning_is_one(run_cli):
    upper = json.loads(run_cli("plan", "8x4TB", "--disk-type", "SSD", "--data", "Media", "--workload", "VM",
                               "--priority", "Space", "--json").stdout)
    lower = json.loads(run_cli("plan", "8x4TB", "--disk-type", "ssd", "--data", "media", "--workload", "vm",
                               "--priority", "space", "--json").stdout)
    assert upper == lower and upper["disk_type"] == "ssd" and upper["recommendation"]["workload"] == "vm"


def test_unknown_command(run_cli):
    r = run_cli("frobnicate")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert r.stderr.startswith("zfslab: error: argument COMMAND: invalid choice: 'frobnicate' (choose from ")
    assert r.stderr.endswith("(see zfslab --help)\n")


def test_debug_shows_the_traceback(run_cli):
    from zfslab.errors import LayoutError
    with pytest.raises(LayoutError):
        run_cli("--debug", "capacity", "raidz3:3", "--disk-size", "4TB")


# --- hostile input (issue 19): one line on stderr, exit 2, never an internal error ----------

@pytest.mark.parametrize("args,message", [
    (["layout", "raidz2:²"], "zfslab: error: raidz2:²: the width must be a whole number, got '²'\n"),
    (["capacity", "raidz2:²", "--disk-size", "4TB"], "zfslab: error: raidz2:²: the width must be a whole number, got '²'\n"),
    (["risk", "raidz2:²", "--disk-size", "4TB"], "zfslab: error: raidz2:²: the width must be a whole number, got '²'\n"),
    (["plan", "6x4TB", "--layouts", "raidz2:²"], "zfslab: error: raidz2:²: the width must be a whole number, got '²'\n"),
    (["layout", "10000000xmirror:2"], "zfslab: error: 10000000xmirror:2: the count is at most 1024, got 10000000\n"),
    (["capacity", "1000000000xmirror:2", "--disk-size", "4TB"],
     "zfslab: error: 1000000000xmirror:2: the count is at most 1024, got 1000000000\n"),
    (["layout", "spare:100000000+mirror:2"],
     "zfslab: error: spare:100000000: the number of spares is at most 1024, got 100000000\n"),
    (["plan", "6x4TB", "--years", "inf"], "zfslab: error: --years 'inf': give a number from 0.001 to 100\n"),
    (["plan", "6x4TB", "--years", "1e308"], "zfslab: error: --years '1e308': give a number from 0.001 to 100\n"),
    (["plan", "6x4TB", "--years", "nan", "--json"], "zfslab: error: --years 'nan': give a number from 0.001 to 100\n"),
    (["plan", "6x4TB", "--ashift", "١٢"],
     "zfslab: error: argument --ashift: --ashift must be a whole number, got '١٢' (see zfslab plan --help)\n"),
    (["plan", "6x4TB", "--afr", "nan"],
     "zfslab: error: argument --afr: --afr must be a number, got 'nan' (see zfslab plan --help)\n"),
    (["plan", "6x4TB", "--afr", "1e400"],
     "zfslab: error: argument --afr: --afr must be from 0.0001 to 99.9, got 1e400 (see zfslab plan --help)\n"),
    (["risk", "mirror:2", "--disk-size", "4TB", "--seed", "-1"],
     "zfslab: error: argument --seed: --seed must be from 0 to 9223372036854775807, got -1 (see zfslab risk --help)\n"),
    (["risk", "mirror:2", "--disk-size", "4TB", "--engine", "montecarlo", "--afr-by-age", "1,x"],
     "zfslab: error: --afr-by-age 'x': give a number from 0.0001 to 99.9\n"),
    (["layout", "mirror:2", "--pool", "my pool", "--devices", "a b,$(reboot)"],
     "zfslab: error: pool name 'my pool': ' ' is not allowed; use letters, digits and _ - : . only\n"),
    (["layout", "mirror:2", "--pool", "mirror"],
     "zfslab: error: pool name 'mirror': reserved by zpool (mirror*, raidz*, draid*, spare*, log, cache, special, "
     "dedup); choose another, e.g. tank\n"),
])
def test_hostile_numbers_and_names_are_refused_in_one_line(run_cli, args, message):
    r = run_cli(*args)
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", message)


@pytest.mark.parametrize("args", [
    ["risk", "mirror:100", "--disk-size", "4TB"], ["risk", "mirror:255", "--disk-size", "4TB"],
    ["risk", "raidz2:6", "--disk-size", "4TB", "--mtbf-hours", "1", "--model", "classic"],
    ["risk", "mirror:2", "--disk-size", "4TB", "--mtbf-hours", "1"],
])
@pytest.mark.parametrize("as_json", [False, True])
def test_extreme_risks_print_no_inf_or_nan(run_cli, args, as_json):
    r = run_cli(*args, *(["--json"] if as_json else []))
    assert r.exit_code == 0 and r.stderr == ""
    if as_json:
        json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    else:
        assert not re.search(r"\b(inf|nan)\b", r.stdout, re.IGNORECASE)


def test_json_output_is_strict():
    from zfslab.report.tables import to_csv, to_json
    assert json.loads(to_json({"mttdl_hours": float("inf"), "p": [1.0, float("-inf")]})) == \
        {"mttdl_hours": None, "p": [1.0, None]}
    with pytest.raises(ValueError):
        to_json({"p": float("nan")})  # a NaN is a bug, never printed
    assert to_csv([{"a": float("inf"), "b": {"x": float("inf")}}]) == 'a,b\n,"{""x"": null}"\n'


def test_monte_carlo_with_a_tiny_afr_stops_at_its_budget_and_says_why(run_cli):
    r = run_cli("risk", "mirror:2", "--disk-size", "4TB", "--afr", "0.0001", "--engine", "montecarlo",
                "--seed", "1", "--max-seconds", "0.5", "--trials", "100")
    assert r.exit_code == 0
    assert "Monte Carlo stopped: --max-seconds ran out before --target-error" in r.stdout
    assert not re.search(r"\binf\b", r.stdout)
    obj = json.loads(run_cli("risk", "mirror:2", "--disk-size", "4TB", "--afr", "0.0001", "--engine", "montecarlo",
                             "--seed", "1", "--max-trials", "1000", "--trials", "100", "--json").stdout)
    assert obj["stopped_by"] == "trial budget" and obj["trials"] == 1000


def test_monte_carlo_shows_progress_on_a_terminal(run_cli, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    r = run_cli("risk", "mirror:2", "--disk-size", "4TB", "--engine", "montecarlo", "--seed", "1",
                "--trials", "4000", "--max-trials", "4000")
    assert r.exit_code == 0
    assert "\rMonte Carlo: 2,000 trials per vdev" in r.stderr and "\rMonte Carlo: 4,000 trials per vdev" in r.stderr


def test_monte_carlo_is_quiet_on_a_pipe(run_cli):
    r = run_cli("risk", "mirror:2", "--disk-size", "4TB", "--engine", "montecarlo", "--seed", "1", "--trials", "2000",
                "--max-trials", "2000")
    assert r.exit_code == 0 and r.stderr == ""


def test_layout_prints_a_quoted_command_and_force_with_its_reason(run_cli):
    r = run_cli("layout", "mirror:2", "--pool", "my_pool", "--devices", "a b,$(reboot)")
    assert r.stdout.splitlines()[-1] == "zpool create my_pool mirror 'a b' '$(reboot)'"
    r = run_cli("layout", "mirror:2+raidz2:6")
    assert r.stdout.splitlines()[-1].startswith("zpool create -f tank mirror DISK1 DISK2 raidz2 DISK3")
    assert 'zpool create refuses a "mismatched replication level" without it' in r.stdout
    obj = json.loads(run_cli("layout", "mirror:2+raidz2:6", "--json").stdout)
    assert obj["zpool_create"][:3] == ["zpool", "create", "-f"] and obj["force_reason"]
    r = run_cli("layout", "mirror:2", "--devices", "[/],:smile:")  # rich would read these as markup
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == "zpool create tank mirror '[/]' :smile:"


def test_a_model_error_is_worded_with_the_flag_the_user_typed(run_cli):
    # the model raises ParamError("replace_hours", ...); the command layer names --replace-hours
    r = run_cli("risk", "mirror:2", "--disk-size", "4TB", "--model", "backblaze", "--replace-hours", "20000")
    assert r.exit_code == 2
    assert r.stderr == "zfslab: error: --replace-hours 20000: the backblaze model needs 1 hour to 1 year\n"


def test_plan_footer_lists_only_the_reasons_some_layout_has(run_cli):
    """'0 replaced by one as good and much safer' was printed for 24x4TB: a count of none is left out."""
    r = run_cli("plan", "24x4TB")
    footer = r.stdout.split("◆ worth considering.")[1].split("(--all shows them)")[0]
    assert " 0 " not in footer.replace("\n", " ") and "more layouts:" in footer


HEAVY = ("numpy", "scipy", "matplotlib", "mpmath", "lz4", "zstandard", "rich")


def _modules_after(*argv: str) -> set[str]:
    """The modules a fresh Python holds after zfslab's main ran argv (stdout thrown away)."""
    code = ("import contextlib, io, sys\nfrom zfslab.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(sys.argv[1:])\n    except SystemExit:\n        pass\n"
            "print('\\n'.join(sys.modules), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    return set(out.stderr.split())


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ()])
def test_the_start_imports_no_command_module_and_no_heavy_library(argv):
    """zfslab --version and --help parse with the registry alone (issue 33: they imported every
    command module and numpy, scipy and matplotlib with them, 28x a bare Python start)."""
    modules = _modules_after(*argv)
    assert not _top(modules) & set(HEAVY), sorted(_top(modules) & set(HEAVY))
    # the parser (commands/_parser.py) and its help formatter's: standard library only
    light = {"zfslab.commands._parser", "zfslab.report", "zfslab.report.shell_text"}
    assert not {m for m in modules if m.startswith(("zfslab.commands.", "zfslab.model", "zfslab.report"))} - light


def test_a_command_imports_its_own_module_only():
    modules = _modules_after("capacity", "--help")
    commands = {m for m in modules if m.startswith("zfslab.commands.") and not m.startswith("zfslab.commands._")}
    assert commands == {"zfslab.commands.capacity"}


def test_plan_imports_no_library_it_does_not_use():
    """plan 24x4TB computes its Markov chains in plain Python (issue 33: numpy's import cost more
    CPU than all of them); numpy, charts, fits, compressors and the store stay out. A layout whose
    chain is past markov.PLAIN_STATES still loads numpy (60x20TB's list has none)."""
    heavy = {"numpy", "scipy", "matplotlib", "mpmath", "lz4", "zstandard", "sqlite3"}
    for argv in (("plan", "24x4TB"), ("plan", "60x20TB", "--all")):
        modules = _modules_after(*argv)
        assert "zfslab.model.reliability.markov" in modules  # the test sees what plan imports
        assert not _top(modules) & heavy, (argv, sorted(_top(modules) & heavy))


def test_every_registered_command_is_listed_by_zfslab_help(capsys):
    from zfslab.cli import main
    from zfslab.commands import COMMANDS
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for command in COMMANDS:
        assert f"    {command.name}" in text and command.help.split()[0] in text, command.name


@pytest.mark.parametrize("argv", [("plan", "24x4TB", "--all"), ("plan", "24x4TB", "--all", "--csv"),
                                  ("risk", "raidz2:6", "--disk-size", "4TB"),
                                  ("expand", "raidz2:6", "--disk-size", "4TB", "--add", "3")])
def test_a_closed_pipe_ends_quietly(argv):
    """zfslab plan --all | head -2 (issue 33: exit 1 with 'internal error', rich's own exit on a
    closed pipe): a pipe whose reader has gone before zfslab writes (every write fails, as after
    head's last line), and zfslab ends with 0 and says nothing."""
    import os
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader: the first write gets EPIPE, deterministically
    try:
        out = subprocess.run([sys.executable, "-m", "zfslab", *argv], stdout=write_end, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, "COLUMNS": "80"}, timeout=120)
    finally:
        os.close(write_end)
    assert (out.returncode, out.stderr) == (0, "")


def _help_examples(command: str, columns: int, monkeypatch) -> tuple[list[str], list[list[str]]]:
    """The example commands of a command's epilog, and each as its --help prints it at `columns`."""
    from zfslab.cli import build_parser
    from zfslab.report.shell_text import COMMAND_LINE
    monkeypatch.setenv("COLUMNS", str(columns))
    sub = next(a for a in build_parser(command)._actions if a.dest == "command").choices[command]
    wanted = [m["command"] for line in sub.epilog.split("\n") if (m := COMMAND_LINE.fullmatch(line))]
    printed, lines = [], sub.format_help().split("\n")
    for i, line in enumerate(lines):
        if COMMAND_LINE.fullmatch(line.split(" \\")[0] if line.endswith(" \\") else line):
            block = [line]
            while block[-1].endswith(" \\"):
                block.append(lines[i + len(block)])
            printed.append(block)
    return wanted, printed


@pytest.mark.parametrize("columns", [60, 80, 100, 120])
@pytest.mark.parametrize("command", _commands())
def test_help_examples_are_one_line_or_continued_with_a_backslash(command, columns, monkeypatch):
    """issue 33: at 100 columns bench's example was cut bare, and its first line, copied, ran bench
    without --dry-run. Each example line fits, every line but its last ends in ' \\', and the lines
    joined are the example, word for word."""
    import shlex
    wanted, printed = _help_examples(command, columns, monkeypatch)
    assert wanted and len(printed) == len(wanted)
    for command_text, block in zip(wanted, printed):
        assert all(line.endswith(" \\") for line in block[:-1]) and not block[-1].endswith("\\")
        assert all(len(line) <= columns - 2 for line in block), block  # argparse's width: COLUMNS - 2
        joined = " ".join(line.removesuffix(" \\").strip() for line in block).split(": ", 1)[1]
        assert shlex.split(joined) == shlex.split(command_text)


def test_a_command_too_long_for_a_line_is_continued_between_words():
    from zfslab.report.shell_text import command_lines
    text = "zfslab bench --disks /dev/a,/dev/b --layouts mirror:2 --db x.sqlite --dry-run"
    lines = command_lines(text, 40, lead="example: ")
    assert lines == ["example: zfslab bench \\", "    --disks /dev/a,/dev/b \\", "    --layouts mirror:2 --db x.sqlite \\",
                     "    --dry-run"]  # an option and its value stay together
    assert command_lines(text, None) == [text] and command_lines(text, 200, lead="$ ") == ["$ " + text]


@pytest.mark.parametrize("argv, fix", [
    (("plan", "24", "x4TB"), "zfslab plan 24x4TB (see zfslab plan --help)"),
    (("plan", "24", "x", "4TB"), "zfslab plan 24x4TB (see zfslab plan --help)"),
    (("plan", "24", "4TB"), "zfslab plan 24x4TB (see zfslab plan --help)"),
    (("capacity", "raidz2", "6"), "zfslab capacity raidz2:6 (see zfslab capacity --help)"),
    (("capacity", "raidz2:6", "foo"), "unrecognized arguments: foo (see zfslab capacity --help)"),
    (("plan", "24x4TB", "--frob"), "unrecognized arguments: --frob (see zfslab plan --help)"),
])
def test_words_that_belong_together_get_the_fix_and_the_commands_help(run_cli, argv, fix):
    """issue 33: 'plan 24 x4TB' suggested 24xx4TB, 'plan 24 x 4TB' and 'capacity raidz2 6' said only
    'unrecognized arguments ... (see zfslab --help)'."""
    r = run_cli(*argv)
    assert r.exit_code == 2 and r.stderr.startswith("zfslab: error: ") and r.stderr.rstrip().endswith(fix), r.stderr
    assert "xx" not in r.stderr and r.stderr.count("\n") == 1


def test_a_space_without_a_unit_is_refused(run_cli):
    """issue 33: plan 8x12TB --min-usable 40 planned for 40 bytes."""
    r = run_cli("plan", "8x12TB", "--min-usable", "40")
    assert r.exit_code == 2 and "--min-usable: 40 has no unit" in r.stderr and "40TB" in r.stderr
    assert "40.00 TB usable" in run_cli("plan", "8x12TB", "--min-usable", "40TB").stdout


def test_plan_without_disks_says_its_disks_are_an_example(run_cli):
    """issue 33: zfslab plan alone planned 24 x 4 TB without a word."""
    first = run_cli("plan").stdout.splitlines()[0]
    assert first.startswith("No disks given: an example of 24x4TB") and "zfslab plan 8x12TB" in first
    assert not run_cli("plan", "24x4TB").stdout.startswith("No disks")


def test_large_ratios_have_one_notation():
    """issue 33: '1 in 4.7×10⁶' (odds), '3.8e5x' (footprint) and '511279.1x' (plan --data-from)."""
    from zfslab.report.tables import times_text
    assert [times_text(x) for x in (3.44, 12.6, 1234, 511279.1, 3.8e6, 1e12)] == \
        ["3.4x", "13x", "1,200x", "510,000x", "3.8×10⁶x", "10¹²x"]


@pytest.mark.parametrize("argv", [("capacity", "raidz2:6", "--disk-size", "4TB", "--zfs-version", "2.3"),
                                  ("layout", "2xraidz2:6+spare:1", "--pool", "tank"),
                                  ("special-size", "tests/data/special-sizes.txt", "--special-small-blocks", "16K")])
def test_a_pipe_honours_columns(argv):
    """issue 33: capacity (133 columns) and layout (127) ignored COLUMNS in a pipe."""
    import os
    from tests.conftest import REPO
    out = subprocess.run([sys.executable, "-m", "zfslab", *argv], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "COLUMNS": "80"}, check=True).stdout
    assert max(len(line) for line in out.splitlines()) <= 80


def test_json_and_csv_hold_no_binary_noise(run_cli):
    """issue 33: plan --json held 72 floats like 616.0000000000001 and 9.999999999999999e-05."""
    noise = re.compile(r"\d\.\d*(?:0{7,}[1-9]|9{7,})\d*")
    for fmt in ("--json", "--csv"):
        out = run_cli("plan", "24x4TB", fmt).stdout
        assert not noise.findall(out), noise.findall(out)[:5]
    assert json.loads(run_cli("plan", "24x4TB", "--json").stdout)["layouts"]


def test_plan_csv_has_one_schema_whatever_the_options(run_cli, tmp_path):
    """issue 33: --years 3 renamed the risk columns and --data-from's fields were in --json only.
    One header (report/plan_csv.py HEADER, listed in docs/cli-output.md), empty where a figure is absent."""
    from tests.conftest import REPO
    from zfslab.report.plan_csv import HEADER
    (tmp_path / "a.txt").write_text("some data\n" * 1000)
    runs = {args: list(csv.DictReader(io.StringIO(run_cli("plan", *args, "--csv").stdout))) for args in
            [("8x12TB",), ("8x12TB", "--years", "3"), ("8x12TB", "--data-from", str(tmp_path)),
             ("8x12TB", "--disk-price", "250"), ("4x4TB,2x8TB",), ("8x12TB", "--no-risk")]}
    for args, rows in runs.items():
        assert rows and tuple(rows[0]) == HEADER, args
    assert runs[("8x12TB", "--years", "3")][0]["p_loss_5y"] == "" and runs[("8x12TB", "--years", "3")][0]["horizon_years"] == "3.0"
    assert all(r["data_used_bytes"] for r in runs[("8x12TB", "--data-from", str(tmp_path))])
    assert not any(r["data_used_bytes"] or r["p_loss_horizon"] for r in runs[("8x12TB", "--no-risk")])
    doc = open(os.path.join(REPO, "docs", "cli-output.md"), encoding="utf-8").read()
    assert [c for c in HEADER if f"`{c}`" not in doc] == []


def test_footprint_explains_its_columns_and_plan_puts_the_data_before_its_footer(run_cli, tmp_path):
    """issue 33 5.11: 'ratio' and 'logical' unexplained, the saving negative; plan --data-from's
    table after the footer."""
    (tmp_path / "a.txt").write_text("compressible text\n" * 5000)
    out = run_cli("footprint", str(tmp_path), "--layouts", "raidz2:6", "--compression", "lz4").stdout
    legend = " ".join(out.split())
    assert "logical: the files in ZFS blocks" in legend and "ratio: zfs get compressratio" in legend
    row = next(line for line in out.splitlines() if line.startswith("raidz2:6"))
    assert "-" not in row.split()[-1] and row.split()[-1] != "0"  # what compression saved, as a size
    plan = run_cli("plan", "8x12TB", "--data-from", str(tmp_path)).stdout
    assert plan.index("Your data (") < plan.index("◆ worth considering") < plan.index("Figures:")


def test_plan_footer_counts_what_it_left_out_when_nothing_meets_the_budget(run_cli):
    """Two disks cannot survive two failures: the closest layout is shown, and the footer counts the
    one left out, not it ('1 more layout: 2 outside the budget ..., -1 beaten' before)."""
    r = run_cli("plan", "2x4TB", "--data", "business")
    footer = " ".join(r.stdout.split("◆ worth considering.")[1].split())
    assert r.exit_code == 0 and "No layout of these disks meets the budget" in r.stdout
    assert "-1" not in footer and footer.startswith("1 more layout: 1 outside the budget"), footer
