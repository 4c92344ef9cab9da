"""The command layer: one module per command, each with `add_parser(sub)`, which declares its
options and registers `run` with `set_defaults(func=run)`, and `run(args) -> int`, which calls
the library and renders the answer. Options several commands take live in `_common` (and, for
the commands that write disks, `_disks`), so each is declared, checked and worded once.

To add a command: write `commands/<verb>.py` with those two functions and list it below (in the
order `zfslab --help` shows them); `scripts/cli_reference.py` then regenerates docs/cli.md.
"""

from zfslab.commands import (
    bench, capacity, drill, expand, footprint, layout, merge, plan, profile_disk, report, risk, special_size,
    validate,
)

COMMANDS = (plan, capacity, special_size, footprint, expand, risk, validate, profile_disk, bench, drill, report, merge,
            layout)
