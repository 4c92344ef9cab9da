"""The one builder of the command lines the controller runs on each host (`zfslab bench`,
`zfslab drill`): flags and typed values in order, so that what a host is told is written once
per command, in the library, and never from the controller's own argparse options."""

from __future__ import annotations

from collections.abc import Sequence

Value = str | int | float | bool | None


def zfslab_argv(verb: str, options: Sequence[tuple[str, Value]]) -> list[str]:
    """`zfslab VERB` and its options in order: True gives the flag alone, None and False leave it
    out, a float is written as repr() writes it (the shortest text that reads back the same)."""
    argv = ["zfslab", verb]
    for flag, value in options:
        if value is True:
            argv.append(flag)
        elif value is not None and value is not False:
            argv += [flag, repr(value) if isinstance(value, float) else str(value)]
    return argv
