"""The long fuzz campaign of issue 19: N hostile command lines, each in its own process.

    python3 benchmarks/fuzz_cli.py                      # 10,000 command lines, forked from one loaded parent
    python3 benchmarks/fuzz_cli.py --mode exec -n 500   # the real executable, a fresh interpreter each time
    nice -n 19 python3 benchmarks/fuzz_cli.py --focus issue38 -n 1500 --seed 450000 --timeout 20 --cpu-seconds 20
                                                        # only issue 38's classes (tests/cli_fuzz.py issue_38_line)
    nice -n 19 python3 benchmarks/fuzz_cli.py --focus pool -n 5000 --seed 700000 --timeout 20 --cpu-seconds 20
                                                        # zfslab pool on damaged captured pools (pool_line)

Command lines come from tests/cli_fuzz.py (plan, capacity, risk, layout, validate, report,
profile-disk, bench and drill with hostile values and malformed files; profile-disk only on
regular files or missing paths inside the run's own folder, bench and drill only as dry runs
whose disks, sandbox and database are names inside it: check_safe refuses any other line). Each runs in its own folder with
resource limits (CPU seconds, address space, file size) and a wall-clock timeout, and no program
may be started. The summary counts internal errors, tracebacks, unexpected exit codes, runs over
10 s (wall clock, and CPU seconds from wait4, which a busy machine does not inflate), the peak
resident memory of any run (wait4's ru_maxrss), and files created, changed or removed other than
the outputs the command was given (the inputs must stay byte for byte), and a --json run that
succeeds with output that is not strict JSON (NaN, Infinity, or not one document). Each run's TMPDIR and
XDG_RUNTIME_DIR is a private folder that must be empty again after it (merge's private copies,
ssh control folders), and runs above --big-mb of resident memory are counted. Issue 38's items 5-8
are counted where a run reaches the sizes the issue names (tests/cli_fuzz.py ISSUE_38_SIZES), with
the problems among those runs.
Failures go to a JSON-lines file with the command line and the end of stderr.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # forked children share nothing with idle BLAS threads
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests"))

from cli_fuzz import (COMMANDS, EXIT_CODES, ISSUE_38_SIZES, POOL_EXIT_CODES, RandomChooser, changed_outside_outputs,  # noqa: E402
                      check_safe, command_line, install_capture, issue_38_line, pool_line, snapshot)


def _limits(cpu_s: int, memory_mb: int, file_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _strict_json(text: str) -> bool:
    """One JSON document with no NaN or Infinity (Python's json writes them; no other reader takes them)."""
    def refuse(constant):
        raise ValueError(constant)
    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


def _no_programs(*args, **kwargs):
    raise AssertionError(f"the fuzz started a program: {args[0] if args else kwargs.get('args')}")


def _wait(pid: int, timeout_s: float) -> tuple[int, int, float, bool]:
    """(exit code, peak RSS in KiB, CPU seconds, timed out) of a child, killed after timeout_s."""
    deadline = time.monotonic() + timeout_s
    timed_out = False
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), usage.ru_maxrss, usage.ru_utime + usage.ru_stime, timed_out
        if time.monotonic() > deadline and not timed_out:
            timed_out = True
            os.killpg(pid, signal.SIGKILL) if _is_group(pid) else os.kill(pid, signal.SIGKILL)
        time.sleep(0.002)


def _is_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def run_forked(argv: list[str], workdir: str, out_path: str, err_path: str, opts,
               capture: str | None = None) -> tuple[int, int, float, bool]:
    """zfslab.cli.main(argv) in a forked child of this already-loaded interpreter; with `capture`,
    its runner answers from that captured pool instead of starting zpool (tests/cli_fuzz.py)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            os.setpgid(0, 0)
            _limits(opts.cpu_seconds, opts.memory_mb, opts.file_mb)
            for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                    (2, err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
                new = os.open(path, flags, 0o600)
                os.dup2(new, fd)
                os.close(new)
            os.chdir(workdir)
            os.environ["TMPDIR"] = os.environ["XDG_RUNTIME_DIR"] = opts.private_tmp
            tempfile.tempdir = None   # tempfile reads TMPDIR again
            import subprocess
            subprocess.Popen = _no_programs  # type: ignore[misc,assignment]
            if capture is not None:
                install_capture(capture)
            from zfslab.cli import main
            try:
                code = main(argv)
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 0
        except BaseException:  # noqa: BLE001 - report it as the run's own failure
            import traceback
            traceback.print_exc()
            code = 70
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code if isinstance(code, int) and 0 <= code < 256 else 71)
    return _wait(pid, opts.timeout)


def run_exec(argv: list[str], workdir: str, out_path: str, err_path: str, opts,
             capture: str | None = None) -> tuple[int, int, float, bool]:
    """The installed `zfslab` executable (or python -m zfslab), a fresh interpreter per run."""
    exe = shutil.which("zfslab")
    cmd = [exe] if exe else [sys.executable, "-m", "zfslab"]
    with open(out_path, "wb") as out, open(err_path, "wb") as err, open(os.devnull, "rb") as devnull:
        pid = _spawn_with_limits(cmd + argv, workdir, out, err, devnull, opts)
    return _wait(pid, opts.timeout)


def _spawn_with_limits(cmd, workdir, out, err, devnull, opts) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            _limits(opts.cpu_seconds, opts.memory_mb, opts.file_mb)
            os.dup2(devnull.fileno(), 0)
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            os.chdir(workdir)
            os.environ["TMPDIR"] = os.environ["XDG_RUNTIME_DIR"] = opts.private_tmp
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    return pid


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", "--count", type=int, default=10_000, help="command lines to run (default 10000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first command line; each next one adds 1")
    p.add_argument("--mode", choices=("fork", "exec"), default="fork",
                   help="fork: the entry point in a child of this loaded interpreter (fast, default); "
                        "exec: the real executable, a new interpreter per run")
    p.add_argument("--timeout", type=float, default=30.0, help="wall-clock seconds before a run is killed")
    p.add_argument("--slow", type=float, default=10.0, help="a run longer than this counts as slow (default 10)")
    p.add_argument("--cpu-seconds", type=int, default=60, help="RLIMIT_CPU of each run")
    p.add_argument("--memory-mb", type=int, default=4096, help="RLIMIT_AS of each run, MiB")
    p.add_argument("--file-mb", type=int, default=256, help="RLIMIT_FSIZE of each run, MiB")
    p.add_argument("--big-mb", type=int, default=500, help="a run whose peak resident memory passes this counts")
    p.add_argument("--focus", choices=("all", "issue38", "pool"), default="all",
                   help="all: every class of tests/cli_fuzz.py; issue38: only the classes issue 38 found unbounded; "
                        "pool: zfslab pool on damaged captured pools (fork mode only)")
    p.add_argument("--failures", default="fuzz-failures.jsonl", help="where failing command lines are written")
    opts = p.parse_args()

    if opts.mode == "fork":  # load everything once: each child starts with it in memory
        import zfslab.cli
        import zfslab.model.reliability.montecarlo  # noqa: F401
        import zfslab.model.validation  # noqa: F401
        import zfslab.report.charts  # noqa: F401
        zfslab.cli.build_parser()  # imports every command module
    run = run_forked if opts.mode == "fork" else run_exec

    outer = tempfile.mkdtemp(prefix="zfslab-fuzz-campaign-")
    base = os.path.join(outer, "runs")
    logs = os.path.join(outer, "logs")
    opts.private_tmp = os.path.join(outer, "tmp")   # each run's TMPDIR and XDG_RUNTIME_DIR: empty after it
    os.mkdir(base)
    os.mkdir(logs)
    os.mkdir(opts.private_tmp, 0o700)
    if opts.focus == "pool" and opts.mode == "exec":
        p.error("--focus pool answers zpool from a capture inside the forked run: use --mode fork")
    draw = {"issue38": issue_38_line, "pool": pool_line}.get(opts.focus, command_line)
    data = os.path.join(REPO, "tests", "data")  # the repository's own files: checked around each run
    codes: collections.Counter = collections.Counter()
    by_command: collections.Counter = collections.Counter()
    sized: collections.Counter = collections.Counter()          # runs at issue 38's sizes, per item
    sized_problems: collections.Counter = collections.Counter()
    counts = collections.Counter()
    slowest = busiest = (0.0, "")
    peak = (0, "")
    loads = [os.getloadavg()[0]]
    failures = open(opts.failures, "w")
    started = time.monotonic()

    def fail(kind: str, case, code, seconds, err_text) -> None:   # (i: the run's number, its seed's offset)
        counts[kind] += 1
        sized_problems.update(case.tags)
        failures.write(json.dumps({"kind": kind, "seed": opts.seed + i, "argv": case.argv, "exit": code, "seconds": round(seconds, 2),
                                   "stderr": err_text[-1500:]}) + "\n")
        failures.flush()

    for i in range(opts.count):
        workdir = tempfile.mkdtemp(dir=base)
        case = draw(RandomChooser(opts.seed + i), workdir)
        check_safe(case)
        if opts.mode == "exec" and any("\x00" in a for a in case.argv):
            counts["skipped: NUL in an argument (no exec can pass it)"] += 1
            shutil.rmtree(workdir, ignore_errors=True)
            continue
        before, data_before = snapshot(workdir), snapshot(data)
        out_path, err_path = os.path.join(logs, "out"), os.path.join(logs, "err")
        t0 = time.monotonic()
        code, rss_kib, cpu, timed_out = run(case.argv, workdir, out_path, err_path, opts, case.capture)
        seconds = time.monotonic() - t0
        with open(out_path, "rb") as f:
            out = f.read().decode(errors="replace")
        with open(err_path, "rb") as f:
            err = f.read().decode(errors="replace")
        counts["examples run"] += 1
        sized.update(case.tags)
        codes[code] += 1
        by_command[case.argv[0]] += 1
        if "internal error" in err:
            fail("internal errors", case, code, seconds, err)
        if "Traceback" in out + err:
            fail("tracebacks", case, code, seconds, err)
        if code not in (POOL_EXIT_CODES if case.capture else EXIT_CODES):
            fail("other exit codes", case, code, seconds, err)
        if code == 0 and "--json" in case.argv and not _strict_json(out):
            fail("--json output not strict JSON", case, code, seconds, out[-1500:])
        if timed_out:
            fail("killed at the timeout", case, code, seconds, err)
        if seconds > opts.slow:
            fail(f"runs over {opts.slow:g} s", case, code, seconds, f"{cpu:.2f} s of CPU; load {os.getloadavg()[0]:.1f}\n{err}")
        if cpu > opts.slow:
            fail(f"runs over {opts.slow:g} s of CPU", case, code, seconds, err)
        if seconds > slowest[0]:
            slowest = (seconds, str(case))
        if cpu > busiest[0]:
            busiest = (cpu, str(case))
        if rss_kib > peak[0]:
            peak = (rss_kib, str(case))
        if rss_kib > opts.big_mb * 1024:
            fail(f"runs over {opts.big_mb} MB", case, code, seconds, f"{rss_kib / 1024:.0f} MiB\n{err}")
        changed = changed_outside_outputs(before, snapshot(workdir), case.outputs)
        if sorted(os.listdir(base)) != [os.path.basename(workdir)] or sorted(os.listdir(outer)) != ["logs", "runs",
                                                                                                     "tmp"]:
            changed.append("beside the run's folder")
        left = os.listdir(opts.private_tmp)
        if left:
            changed.append(f"left in TMPDIR: {left}")
            for name in left:   # the next run starts from an empty one (never through a symlink)
                path = os.path.join(opts.private_tmp, name)
                os.unlink(path) if os.path.islink(path) or not os.path.isdir(path) else shutil.rmtree(path)
        if snapshot(data) != data_before:  # (someone else editing tests/data meanwhile shows up here too)
            changed.append("tests/data")
        if changed:
            fail("files changed outside the outputs", case, code, seconds, f"changed: {changed}\n{err}")
        shutil.rmtree(workdir, ignore_errors=True)
        if (i + 1) % 100 == 0:
            loads.append(os.getloadavg()[0])
        if (i + 1) % 500 == 0:
            print(f"{i + 1:,} runs, {time.monotonic() - started:,.0f} s; "
                  f"problems so far: {sum(v for k, v in counts.items() if k != 'examples run' and not k.startswith('skipped'))}",
                  file=sys.stderr, flush=True)
    failures.close()
    shutil.rmtree(outer, ignore_errors=True)

    print(f"command: {' '.join(sys.argv)}")
    print(f"mode: {opts.mode}; focus {opts.focus}; seeds {opts.seed}..{opts.seed + opts.count - 1}; "
          f"{time.monotonic() - started:,.0f} s in all")
    shown = [c for c in (*COMMANDS, "pool") if by_command[c]]
    print(f"examples run: {counts['examples run']:,} ({', '.join(f'{c} {by_command[c]:,}' for c in shown)})")
    print("exit codes: " + ", ".join(f"{k}: {v:,}" for k, v in sorted(codes.items())))
    for kind in ("internal errors", "tracebacks", "other exit codes", "--json output not strict JSON",
                 "killed at the timeout",
                 f"runs over {opts.slow:g} s", f"runs over {opts.slow:g} s of CPU", f"runs over {opts.big_mb} MB",
                 "files changed outside the outputs"):
        print(f"{kind}: {counts[kind]}")
    for kind, n in counts.items():
        if kind.startswith("skipped"):
            print(f"{kind}: {n}")
    if any(sized.values()) or opts.focus == "issue38":
        print("runs at issue 38's sizes (problems among them):")
        for tag, what in ISSUE_38_SIZES.items():
            print(f"  {sized[tag]:5,} ({sized_problems[tag]}) {what}")
    print(f"slowest run: {slowest[0]:.2f} s: {slowest[1][:300]}")
    print(f"most CPU in one run: {busiest[0]:.2f} s: {busiest[1][:300]}")
    print(f"load average (1 min) on this machine during the campaign: {min(loads):.1f} to {max(loads):.1f}, "
          f"on {os.cpu_count()} CPUs (wall times above include waiting for a CPU)")
    print(f"peak memory (max RSS of one run): {peak[0] / 1024:.0f} MiB: {peak[1][:300]}")
    print(f"failing command lines: {opts.failures}")
    problems = sum(counts[k] for k in ("internal errors", "tracebacks", "other exit codes",
                                       "--json output not strict JSON", "killed at the timeout",
                                       f"runs over {opts.slow:g} s", f"runs over {opts.slow:g} s of CPU",
                                       f"runs over {opts.big_mb} MB", "files changed outside the outputs"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
