"""The command layer: one module per command, each with `add_parser(sub)`, which declares its
options and registers `run` with `set_defaults(func=run)`, and `run(args) -> int`, which calls
the library and renders the answer. Options several commands take live in `_common` (and, for
the commands that write disks, `_disks`), so each is declared, checked and worded once.

A command's module is imported only when that command runs (or its --help is asked for): the
registry below is all `zfslab --help` and the parser need to list the commands, so that
`zfslab --version` does not pay for numpy, scipy and matplotlib (issue 33).

To add a command: write `commands/<verb>.py` with those two functions and add a Command below (in
the order `zfslab --help` shows them) with its one-line help; `scripts/cli_reference.py` then
regenerates docs/cli.md.
"""

from __future__ import annotations

import importlib
from collections import namedtuple


class Command(namedtuple("Command", "name module help")):
    """name: as typed (special-size); module: zfslab.commands.<module>; help: the line zfslab
    --help shows, which the module's parser takes from here. (A named tuple, not a dataclass:
    dataclasses imports inspect, a tenth of a bare Python start.)"""

    __slots__ = ()

    def load(self):
        return importlib.import_module(f"zfslab.commands.{self.module}")


COMMANDS: tuple[Command, ...] = (
    Command("plan", "plan", "every layout for your disks, and the one to build"),
    Command("capacity", "capacity", "exact zpool list SIZE and zfs list USED+AVAIL of one layout"),
    Command("special-size", "special_size", "how big a special vdev must be for a data set (metadata and small blocks)"),
    Command("footprint", "footprint",
            "how much of your own data fits on each layout (compression, raidz allocation per block)"),
    Command("expand", "expand", "RAID-Z expansion: zpool/zfs list after each added disk"),
    Command("risk", "risk", "risk of data loss over the years for one layout"),
    Command("validate", "validate", "check the speed model on a published table of measurements"),
    Command("profile-disk", "profile_disk", "measure one disk's speed with fio (read-only by default)"),
    Command("bench", "bench", "build each layout on your disks, run fio, store every result"),
    Command("drill", "drill", "fail disks, time resilvers, corrupt blocks: with the data verified"),
    Command("report", "report", "an HTML page with tables and charts: plan, bench results, drills"),
    Command("merge", "merge", "merge results databases from several hosts into one"),
    Command("pool", "pool", "read a pool you run (read-only): its state, zfslab's model against it, findings"),
    Command("layout", "layout", "check a layout, or read one from a zpool create vdev list"),
    Command("completion", "completion", "print the bash, zsh or fish completion script (docs/install.md)"),
    Command("man", "man", "print the manual page zfslab(1) in roff"),
)
BY_NAME = {c.name: c for c in COMMANDS}
