"""The terminal answer of `profile-disk --hosts`: a table per group of identical disks, then the
disks and hosts slower than their peers, then what could not be measured; 80 to 120 columns."""

from __future__ import annotations

from zfslab.model.fleet_profile import DiskResult, FleetProfile
from zfslab.model.outliers import MIN_PEERS
from zfslab.report.tables import wrapped_lines


def profile_lines(profile: FleetProfile, threshold: float, *, width: int = 100, wrap: bool = True) -> list[str]:
    """The terminal answer: a table per peer group, one row a disk, then the outliers (hosts first),
    the groups too small to tell, then the failures. Fits `width` (80 to 120): a long disk name keeps its distinctive tail; `wrap`
    False (a pipe, a file): each outlier and failure stays one line, for grep."""
    prose = width if wrap else None
    out: list[str] = []
    slow = {(o.host, o.disk) for o in profile.disk_outliers(threshold)}
    groups: dict[str, list[DiskResult]] = {}
    for r in profile.results:
        groups.setdefault(r.peer_group, []).append(r)
    numbers = f"{'seq MB/s':>9}{'inner MB/s':>11}{'4k QD1 IOPS':>12}{'4k QD8 IOPS':>12}"
    host_w = min(max([len(r.host) for r in profile.results] + [4]), 20)
    disk_w = max(8, min(max([len(r.disk) for r in profile.results] + [4]), width - host_w - len(numbers) - 10))
    for group, rows in groups.items():
        out += [f"{group} ({len(rows)} disks)", f"{'host':<{host_w}}  {'disk':<{disk_w}}{numbers}"]
        for r in rows:
            flag = "  slow" if (r.host, r.disk) in slow else ""
            out.append(f"{_tail(r.host, host_w):<{host_w}}  {_tail(r.disk, disk_w):<{disk_w}}{r.seq_mb_s:>9,.0f}"
                       f"{r.inner_mb_s:>11,.0f}{r.rand_iops_qd1:>12,.0f}{r.rand_iops_qd8:>12,.0f}{flag}")
        out.append("")
    found = profile.host_outliers(threshold) + profile.disk_outliers(threshold)
    if found:
        out += [f"outliers (more than {threshold:.0%} below the median of identical peers):"]
        for o in found:
            out += wrapped_lines(f"  {o.line()}", prose, indent=4)
    unknown = profile.undecided()
    if not found and profile.results:
        out.append(f"no outliers: every disk and host within {threshold:.0%} of the median of its identical peers"
                   if not unknown else f"no outliers in the groups of {MIN_PEERS} or more identical peers")
    for u in unknown:
        out += wrapped_lines(u.line(), prose, indent=4)
    for line in profile.failures:
        out += wrapped_lines(f"not measured: {line}", prose, indent=4)
    return out


def _tail(text: str, width: int) -> str:
    return text if len(text) <= width else "…" + text[-(width - 1):]



def drill_lines(drills, failures, scenarios, *, width: int | None = None) -> list[str]:
    """`drill --hosts`: one row a host, one column a scenario (its outcome and time), then each
    host's verdict and what failed; prose cut to `width` (None: a line each, for a pipe)."""
    host_w = min(max([len(d.host) for d in drills] + [4]), 20)
    cell_w = 20
    out = [f"{'host':<{host_w}}  {'layout':<12}" + "".join(f"{s:>{cell_w}}" for s in scenarios) + f"{'total':>9}"]
    for d in drills:
        by = {s.scenario: s for s in d.scenarios}
        cells = "".join(f"{(f'{by[s].outcome} {by[s].seconds:,.0f} s' if s in by else '-'):>{cell_w}}" for s in scenarios)
        out.append(f"{_tail(d.host, host_w):<{host_w}}  {_tail(d.layout, 12):<12}{cells}{d.seconds:>7,.0f} s")
    out.append("")
    for d in drills:
        out += wrapped_lines(f"{d.host}: {d.verdict}", width, indent=4)
    for line in failures:
        out += wrapped_lines(f"not drilled: {line}", width, indent=4)
    return out


def plan_lines(plans, failures, *, width: int | None = None) -> list[str]:
    """`drill --hosts --dry-run`: each host's plan under its name, and whether its gate would let it go."""
    out: list[str] = []
    for p in plans:
        state = "would go ahead" if p.exit_code == 0 else "would be refused (exit 10)"
        out += [f"== {p.host}: {state} ==", *p.text.rstrip("\n").splitlines()]
        out += [f"  {n}" for n in p.notes]
        out.append("")
    for line in failures:
        out += wrapped_lines(f"not planned: {line}", width, indent=4)
    return out
