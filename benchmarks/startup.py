"""What starting zfslab costs: CPU time (user + system) of `zfslab --version`, `zfslab --help` and
`zfslab plan 24x4TB`, each against a bare `python3 -c pass` measured in the same run, so that the
ratios hold on a busy or a slow machine (issue 33: --version and --help at most 3x a bare start,
plan 24x4TB at most 0.25 s of CPU).

Measured 2026-11-28, one interleaved run of 9 rounds on this 2-core machine, with .pyc files
(`python3 -m zfslab` of each tree): plan 24x4TB 0.552 s before (dfb4eba: numpy imported for the
Markov chains, metaslabs listed one by one) and 0.264 s after (a839a6d), `python3 -c pass` 0.071 s;
plan 12x16TB --data archive 0.676 -> 0.355 s. This script then printed --version 1.2x, --help
1.4x, plan 24x4TB 0.282 s. What is left of plan's start: about 0.10 s of imports (42 dataclasses
take half of it, rich most of the rest) and 0.07 s of work (0.04 s of it the Markov chains).

Run: python3 benchmarks/startup.py [--repeats N]   (no root, no disks). It runs the installed
console script (the one next to this Python, as a user's shell finds it), falls back to
`python3 -m zfslab`, interleaves the commands round by round and prints each one's median.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig

COMMANDS = {
    "python3 -c pass": [sys.executable, "-c", "pass"],
    "zfslab --version": ["--version"],
    "zfslab --help": ["--help"],
    "zfslab plan 24x4TB": ["plan", "24x4TB"],
}


def zfslab_argv() -> list[str]:
    """The console script pip installed beside this Python (not a pyenv shim, whose bash start
    would be measured too), else `python3 -m zfslab`."""
    script = os.path.join(sysconfig.get_path("scripts"), "zfslab")
    if os.access(script, os.X_OK):
        return [sys.executable, script]
    found = shutil.which("zfslab")
    return [found] if found and not _is_shell_shim(found) else [sys.executable, "-m", "zfslab"]


def _is_shell_shim(path: str) -> bool:
    with open(path, "rb") as f:
        return b"bash" in f.readline()


# pip writes each module's .pyc at install, so a user's start reads them; a PYTHONDONTWRITEBYTECODE
# in this shell (these machines set it) would make every run compile zfslab anew.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"COLUMNS": "80"}


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU time of one run of argv and its children (getrusage of reaped children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15, help="runs of each command (default 15)")
    args = ap.parse_args()
    base = zfslab_argv()
    argvs = {name: (cmd if name.startswith("python3") else base + cmd) for name, cmd in COMMANDS.items()}
    for argv in argvs.values():  # warm the page cache and .pyc files: the first run is not measured
        cpu_seconds(argv)
    samples: dict[str, list[float]] = {name: [] for name in argvs}
    for _ in range(args.repeats):  # round by round, so that a busy moment touches every command alike
        for name, argv in argvs.items():
            samples[name].append(cpu_seconds(argv))
    bare = statistics.median(samples["python3 -c pass"])
    print(f"CPU time, median of {args.repeats} runs ({' '.join(base)}):")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:<20} {median:6.3f} s  {median / bare:5.1f}x python3 -c pass")


if __name__ == "__main__":
    main()
