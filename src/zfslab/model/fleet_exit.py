"""One exit code for a command run over a fleet (`bench`, `drill`, `profile-disk` with --hosts),
whatever each host answered (docs/fleet.md#exit-codes):

- a host's own zfslab refused before writing anything: its safety gate (exit 10 there) or what it
  was asked (exit 2 there: a disk it does not have, serials that do not match): 10, as a local
  refusal is; the host's own line says which;
- a host unreachable, lost mid-run, or whose command failed otherwise (any other exit): 4;
- several hosts: the highest, so a refusal (10: the user must decide about that host's disks)
  is not hidden by another host's failure (4: run again), and both are listed.

The refusals before any host runs anything (options, preflight's comparison of the hosts) are
the controller's own and stay 2. Pure: the commands give the exit codes their hosts returned.
"""

from __future__ import annotations

from collections.abc import Iterable

HOST_REFUSED = 10
HOST_FAILED = 4
REFUSED_THERE = frozenset({2, 10})   # a zfslab's exit codes for "refused, nothing written" (errors.EXIT_CODES)


def host_code(remote_exit: int) -> int:
    """What one host's exit code counts as in the fleet's: 0, HOST_REFUSED or HOST_FAILED."""
    if remote_exit == 0:
        return 0
    return HOST_REFUSED if remote_exit in REFUSED_THERE else HOST_FAILED


def fleet_code(host_codes: Iterable[int]) -> int:
    """The command's exit code from each host's, as host_code() counts them (0 when there are none)."""
    return max((host_code(c) for c in host_codes), default=0)
