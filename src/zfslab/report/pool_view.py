"""`zfslab pool`'s answer as text lines (80 columns) and as one JSON record (docs/pool.md)."""

from __future__ import annotations

import shlex
import textwrap
from datetime import datetime, timezone

from zfslab.model.fleet_pool import FleetPools
from zfslab.model.pool_findings import NAMED_AT_MOST, Finding, record_text
from zfslab.model.growth_outlook import OptionOutlook, Outlook
from zfslab.model.pool_growth import Growth
from zfslab.model.recommend import DATA_LEVELS, METRIC_NAMES, workload_text
from zfslab.model.pool_model import ModelCheck, failures_survived
from zfslab.model.disk_age import BATCH_FRAILTY_VARIANCE, BATCH_HOURS_APART, FLAGGED_HOURS
from zfslab.model.pool_risk import RiskNow, VdevRate
from zfslab.model.pool_state import Filesystem, PoolState, PoolVdev
from zfslab.model.units import format_bytes, odds
from zfslab.report.shell_text import command_lines


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    for unit, div in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div:
            return f"{n / div:.2f}{unit}"
    return f"{n}B"


def _scan_text(state: PoolState) -> str:
    s = state.scan
    if s.function is None:
        return "none yet"
    if s.state == "scanning":
        pct = f", {s.percent_done:.1f} % done" if s.percent_done is not None else ""
        return f"{s.function} in progress{pct}"
    when = (datetime.fromtimestamp(s.end_epoch_s, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
            if s.end_epoch_s is not None else "at an unknown time")
    return f"{s.function} {s.state} {when}, {s.errors} errors"


def _vdev_rows(v: PoolVdev, depth: int) -> list[str]:
    name = "  " * depth + v.short_name
    if len(name) > 34:  # the end of a by-id name tells disks apart
        name = "  " * depth + "…" + name[len(name) - 33 + 2 * depth:]
    errors = f"{v.read_errors}/{v.write_errors}/{v.checksum_errors}"
    size = _size(v.size_bytes if not v.is_leaf or depth == 0 and v.size_bytes else v.device_bytes)
    cls = v.alloc_class if depth == 0 else ""
    row = f"{name:<34} {cls:<7} {v.state:<8} {errors:>9} {size:>8}"
    if len(row) + 2 + len(v.note) <= 80:
        rows = [f"{row}  {v.note}".rstrip()]
    else:  # a note zpool status prints beside a leaf (a 512e disk's "block size: 512B configured, 4096B
        # native") goes on the lines below it, so that no line is over 80 columns
        pad = "  " * (depth + 2)
        rows = [row, *textwrap.wrap(v.note, 80, initial_indent=pad, subsequent_indent=pad)]
    for c in v.children:
        rows += _vdev_rows(c, depth + 1)
    return rows


def pool_lines(state: PoolState, check: ModelCheck) -> list[str]:
    """The pool's table and the model's figures, no line over 80 columns."""
    version = check.version.split("-")[0]
    lines = [f"pool {state.name}: {state.state}, OpenZFS {version} (read from its {state.source} output)",
             f"scan: {_scan_text(state)}; {state.errors_text or 'errors: not shown'}",
             "",
             f"{'vdev':<34} {'class':<7} {'state':<8} {'r/w/cksum':>9} {'size':>8}"]
    for v in state.vdevs:
        lines += _vdev_rows(v, 0)
    head = f"model against reality: {check.layout or 'no layout zfslab models'}"
    if len(head) > 80:  # a long layout (disks of several sizes) on lines of its own, cut after a '+'
        head = "model against reality:\n" + "\n".join(
            textwrap.wrap(check.layout.replace("+", "+ "), 78, initial_indent="  ", subsequent_indent="  ",
                          break_on_hyphens=False, break_long_words=False)).replace("+ ", "+")
    sized = check.vdev_bytes is None and "@" in check.layout
    lines += ["", *head.split("\n"),
              f"ashift {check.ashift or '-'}, " + ("disks of several sizes, each as ZFS sees it after the @" if sized
                                                    else "each disk " + ('-' if check.vdev_bytes is None else
                                                                         format(check.vdev_bytes, ',')) +
                                                    " bytes as ZFS sees it")]
    lines.append(f"{'':<12} {'zpool/zfs':>18} {'zfslab':>18} {'difference':>12}")
    for what, real, model, diff in (("SIZE", check.pool_size_bytes, check.model_size_bytes, check.size_diff_bytes),
                                    ("USED+AVAIL", check.pool_usable_bytes, check.model_usable_bytes,
                                     check.usable_diff_bytes)):
        lines.append(f"{what:<12} {real:>18,} {'-' if model is None else format(model, ','):>18} "
                     f"{'-' if diff is None else format(diff, '+,'):>12}")
    return lines


def finding_lines(check: ModelCheck, found: tuple[Finding, ...]) -> list[str]:
    """Whether the model agrees, and the findings: one paragraph each (the caller wraps them)."""
    agree = {True: "they agree to the byte", False: "they differ", None: "not compared"}[check.agrees]
    head = [agree + (f": {check.reason}" if check.reason else ""), "", "findings:" if found else "findings: none"]
    return head + [f"{'!' if f.severity == 'warning' else '-'} {f.text}" for f in found]


def footprint_advice(state: PoolState, layout: str) -> str:
    """The commands that can tell whether the recordsize suits the files: pool reads no file
    (docs/pool.md#findings, recordsize). One for the root dataset, and one for each filesystem zfs get -r
    showed with a recordsize of its own (NAMED_AT_MOST, then how many more); '' when none is mounted."""
    ashifts = [v.ashift for v in state.of_class("normal") if v.ashift is not None]

    def command(fs: Filesystem) -> str:
        compression = {"on": "lz4", "": ""}.get(fs.compression, fs.compression)
        options = "".join((f" --layouts {layout}" if layout else "",
                           f" --compression {compression}" if compression else "",
                           f" --ashift {min(ashifts)}" if ashifts else ""))
        size = record_text(int(fs.recordsize))
        return f"`zfslab footprint {shlex.quote(fs.mountpoint)} --recordsize {size}{options}`"

    def judged(fs: Filesystem) -> bool:
        return fs.recordsize.isdigit() and len(fs.recordsize) < 12 and fs.mountpoint.startswith("/")

    every = state.filesystem_props()
    root = every[0] if every[0].name == state.name else None
    parts = []
    if root is not None and judged(root):
        known = "" if state.filesystems else (f" (each dataset may set its own: `zfs get -r recordsize "
                                              f"{shlex.quote(state.name)}`)")
        parts.append(f"whether recordsize {record_text(int(root.recordsize))} suits the files under "
                     f"{root.mountpoint}{known} is what {command(root)} measures, against another --recordsize; "
                     "pool reads no file")
    own = [fs for fs in (every[1:] if root else every) if judged(fs)
           and (root is None or fs.recordsize != root.recordsize)]
    if own:
        named = [f"{fs.name} ({record_text(int(fs.recordsize))}): {command(fs)}" for fs in own[:NAMED_AT_MOST]]
        if len(own) > NAMED_AT_MOST:
            named.append(f"and {len(own) - NAMED_AT_MOST} more (`zfs get -r recordsize {shlex.quote(state.name)}`)")
        parts.append(f"datasets with a recordsize of their own: {'; '.join(named)}")
    return "; ".join(parts)


SPEED_UNITS = {"write_mb_s": "MB/s", "rewrite_mb_s": "MB/s", "read_mb_s": "MB/s"}


def _speed_text(outlook: Outlook, option: OptionOutlook) -> str:
    """The workload's figures plan weighs: 'write 1,760 MB/s (+100 %), read ... , 4K random read 420 IOPS (+100 %)'."""
    parts = []
    for k in outlook.goal.metrics:
        name = METRIC_NAMES.get(k, k).replace("streaming ", "")
        change = (option.speed_vs_now or {}).get(k)
        parts.append(f"{name} {option.speed[k]:,.0f} {SPEED_UNITS.get(k, 'IOPS')}"
                     + ("" if change is None else f" ({100 * (change - 1):+.0f} %)"))
    return ", ".join(parts)


def _outlook_text(outlook: Outlook, option: OptionOutlook, how: str) -> str:
    risk = (", ".join(f"{odds(p)} within {y:g} year{'s' * (y != 1)}" for y, p in zip(outlook.years, option.p_loss))
            if option.p_loss else f"not computed ({option.risk_reason})")
    speed = (f"predicted {_speed_text(outlook, option)}" if option.speed is not None else
             "speed: plan's model has no term for special or log vdevs")
    # zpool replace with the old disk in keeps the vdev whole while it resilvers: the risk is the pool's after
    text = f"    risk of losing the pool{' once all are replaced' if how == 'zpool replace' else ''}: {risk}; {speed}"
    if option.left_out:
        text += f"; left out: {'; '.join(option.left_out)}"
    return text


def growth_lines(grown: Growth, width: int | None, outlook: Outlook | None = None) -> list[tuple[str, int | None]]:
    """The ways to take the new disks, as (text, indent of its continuation lines): prose is wrapped
    by the caller; a command comes in lines of at most `width` continued with ` \\` (indent None:
    printed as is), so that what a user copies is a whole command. With `outlook`: ranked, each with
    its risk and speed, and the recommendation."""
    out: list[tuple[str, int | None]] = [("", None), (f"with {grown.count} new disk{'s' * (grown.count > 1)} of "
                                                      f"{format_bytes(grown.disk_bytes)}:", 2)]
    if not grown.options:
        out.append(("- no way zfslab models", 2))
    order = outlook.order if outlook is not None else range(len(grown.options))
    for i in order:
        o = grown.options[i]
        figures = (f"+{format_bytes(o.gain_bytes)} usable, {format_bytes(o.usable_after_bytes)} in all"
                   + (f" (SIZE {format_bytes(o.size_after_bytes)})" if o.size_after_bytes is not None else "")
                   if o.gain_bytes is not None else o.reason)
        like = ", like the pool" if o.like_the_pool else ""
        out.append((f"- {o.how} {o.adds}{like}: {figures}; survives {o.survives} failed "
                    f"disk{'s' * (o.survives != 1)} (pool {o.layout_after})", 2))
        out += [(line, None) for c in o.commands for line in command_lines(c, width, lead="    ", indent="      ")]
        if outlook is not None:
            out.append((_outlook_text(outlook, outlook.options[i], o.how), 6))
        out += [(f"    ! {c}", 6) for c in o.cautions]
    if grown.note:
        out.append((f"note: {grown.note}", 2))
    rec = outlook.recommendation if outlook is not None else None
    if rec is not None and (rec.considered > 1 or outlook.lowering or not rec.within_budget):
        pick = grown.options[outlook.recommended]
        rule = f"plan's rule (docs/recommend.md; {workload_text(rec.goal)}, --data {rec.goal.data})"
        lead = (f"recommended, by {rule}: {pick.how} {pick.adds}." if rec.within_budget else
                f"no option meets the budget by {rule}; the closest: {pick.how} {pick.adds}.")
        lowered = ", ".join(grown.options[i].adds for i in outlook.lowering)
        out.append((f"{lead} {rec.reason}" + (f" Not ranked: {lowered}, which would leave the pool surviving "
                                                f"fewer failed disks than it does now." if lowered else ""), 2))
    return out


def growth_record(grown: Growth, outlook: Outlook | None = None) -> dict:
    """The --json answer for --add or --replace-with; with `outlook`, the options ranked, each with its
    risk and speed, and the recommendation."""
    def option(i: int) -> dict:
        o = grown.options[i]
        record = {"how": o.how, "adds": o.adds, "layout_after": o.layout_after, "survives": o.survives,
                  "like_the_pool": o.like_the_pool, "usable_after_bytes": o.usable_after_bytes,
                  "size_after_bytes": o.size_after_bytes,
                  "gain_bytes": o.gain_bytes, "commands": list(o.commands), "cautions": list(o.cautions),
                  "reason": o.reason, "resilver_hours": o.resilver_hours}
        if outlook is not None:
            x = outlook.options[i]
            record |= {"p_loss": {f"{y:g}": p for y, p in zip(outlook.years, x.p_loss)} if x.p_loss else None,
                       "risk_reason": x.risk_reason, "speed": x.speed, "speed_vs_now": x.speed_vs_now,
                       "left_out": list(x.left_out), "recommended": i == outlook.recommended}
        return record
    order = outlook.order if outlook is not None else range(len(grown.options))
    record = {"count": grown.count, "disk_bytes": grown.disk_bytes, "note": grown.note,
              "options": [option(i) for i in order]}
    if outlook is not None:
        rec = outlook.recommendation
        record |= {"speed_now": outlook.speed_now, "speed_disk_type": outlook.disk_type,
                   "recordsize": outlook.recordsize,
                   "recommendation": None if rec is None else rec.as_dict() | {
                       "option": grown.options[outlook.recommended].adds}}
    return record


def _vdev_record(v: PoolVdev) -> dict:
    record = {"name": v.name, "kind": v.kind, "class": v.alloc_class, "state": v.state,
              "read_errors": v.read_errors, "write_errors": v.write_errors, "checksum_errors": v.checksum_errors}
    if not v.is_leaf:
        record["failures_survived"] = failures_survived(v)
    for key in ("parity", "size_bytes", "alloc_bytes", "device_bytes", "ashift"):
        value = getattr(v, key)
        if value is not None and (key != "parity" or v.kind in ("raidz", "draid")):
            record[key] = value
    if v.children:
        record["children"] = [_vdev_record(c) for c in v.children]
    return record


def pool_record(state: PoolState, check: ModelCheck, found: tuple[Finding, ...]) -> dict:
    """The --json answer for one pool."""
    s = state.scan
    return {
        "pool": state.name, "state": state.state, "openzfs": check.version, "read_from": state.source,
        "scan": {"function": s.function, "state": s.state, "end_epoch_s": s.end_epoch_s, "errors": s.errors,
                 "percent_done": s.percent_done},
        "errors": state.errors_text,
        "vdevs": [_vdev_record(v) for v in state.vdevs],
        "model": {"layout": check.layout, "ashift": check.ashift, "vdev_bytes": check.vdev_bytes,
                  "size_bytes": {"pool": check.pool_size_bytes, "zfslab": check.model_size_bytes,
                                 "difference": check.size_diff_bytes},
                  "usable_bytes": {"pool": check.pool_usable_bytes, "zfslab": check.model_usable_bytes,
                                   "difference": check.usable_diff_bytes},
                  "agrees": check.agrees, "reason": check.reason},
        "findings": [{"code": f.code, "severity": f.severity, "text": f.text, "vdev": f.vdev} for f in found],
    }


def fleet_lines(fleet: FleetPools) -> list[tuple[str, int | None]]:
    """pool --hosts: one table of every host's pools (80 columns), then each host's findings and the
    hosts that gave no report, as (text, indent of its continuation lines; None: a table row)."""
    out: list[tuple[str, int | None]] = [(f"{'host':<12} {'pool':<12} {'state':<8} {'layout':<16} {'model':<7} "
                                          "findings", None)]
    for p in fleet.pools:
        warnings = sum(f.severity == "warning" for f in p.findings)
        notes = len(p.findings) - warnings
        found = ", ".join(filter(None, (f"{warnings} warning{'s' * (warnings != 1)}" if warnings else "",
                                        f"{notes} note{'s' * (notes != 1)}" if notes else ""))) or "none"
        model = {True: "agrees", False: "differs", None: "-"}[p.agrees]
        out.append((f"{_cut(p.host, 12):<12} {_cut(p.pool, 12):<12} {_cut(p.state, 8):<8} "
                    f"{_cut(p.layout or '-', 16):<16} {model:<7} {found}", None))
    for p in fleet.pools:
        if p.findings:
            out.append(("", None))
            out.append((f"{p.host} {p.pool}:", 2))
            out += [(f"{'!' if f.severity == 'warning' else '-'} {f.text}", 2) for f in p.findings]
    if fleet.failures:
        out.append(("", None))
        out.append(("no report from:", 2))
        out += [(f"- {line}", 2) for line in fleet.failures]
    return out


def _cut(text: str, width: int) -> str:
    """A table cell of at most `width`: its tail kept after '…', as a disk's by-id name is most told by it."""
    return text if len(text) <= width else "…" + text[-(width - 1):]


def fleet_record(fleet: FleetPools) -> dict:
    hosts: dict[str, list[dict]] = {}
    for p in fleet.pools:
        hosts.setdefault(p.host, []).append(p.record)
    return {"hosts": [{"host": h, "pools": records} for h, records in hosts.items()],
            "failures": list(fleet.failures)}


def _within(risk: RiskNow, values: tuple[float, ...]) -> str:
    return ", ".join(f"{odds(p)} within {y:g} year{'s' * (y != 1)}" for y, p in zip(risk.years, values))


def _horizons(risk: RiskNow, afrs: tuple[float, ...]) -> str:
    return ", ".join(f"{100 * a:.1f} % ({y:g} y ahead)" for y, a in zip(risk.years, afrs))


def rate_text(risk: RiskNow, rate: VdevRate) -> str:
    """Which rate one vdev's figures used: 'by age: 4.1 y → AFR 3.0 % (1 y ahead), ...' and its batch."""
    if rate.disks_aged == 0:
        basis = f"class rate {100 * risk.class_afr_per_year:.1f} % (no disk's age known)"
    else:
        some = f"{rate.disks_aged} of {rate.disks} disks, " if rate.disks_aged < rate.disks else ""
        basis = f"by age: {some}{rate.mean_age_years:.1f} y → AFR {_horizons(risk, rate.afr_per_year)}"
    if rate.batch_disks:
        raised = ", ".join(f"×{factor:.2f}" for factor in rate.batch_factors)
        basis += (f"; one batch: {rate.batch_disks} × {rate.batch_model} within {BATCH_HOURS_APART:,} power-on "
                  f"hours, so while failures are unrepaired the others fail faster ({raised})")
    for signal in dict.fromkeys(sig for _, sig in rate.flagged):   # one clause per signal, in order
        disks = [disk for disk, sig in rate.flagged if sig == signal]
        who = f"{disks[0]} has" if len(disks) == 1 else f"{len(disks)} disks have"
        then = f"×{signal.after_factor:g} after" if signal.after_factor != 1 else "its age's rate after"
        basis += f"; {who} {signal.counter}: ×{signal.factor:g} for {FLAGGED_HOURS // 24} days, {then}"
    if rate.flagged:
        basis += " (docs/reliability.md#flagged-disks)"
    return f"{rate.vdev}: {basis}"


def risk_lines(risk: RiskNow) -> list[str]:
    """The pool's risk of loss now, one paragraph each (the caller wraps them)."""
    if risk.reason:
        return ["", f"risk of losing the pool: not computed ({risk.reason})"]
    rates = "failure rates by the disks' ages and" if risk.by_age else "failure and"
    lines = ["", f"risk of losing the pool ({risk.disk_class.upper()} {rates} resilver rates, "
                 f"docs/pool.md#risk-now): {_within(risk, risk.p_loss)}"]
    lines += [f"- {rate_text(risk, rate)}" for rate in risk.rates]
    lines += [f"- {note}" for note in risk.notes]
    if risk.p_loss_repaired:
        lines.append(f"- with {risk.disks_out} disk{'s' * (risk.disks_out != 1)} out now; once replaced and "
                     f"resilvered: {_within(risk, risk.p_loss_repaired)}")
    if risk.p_loss_flagged_out:
        lines.append(f"- if the {risk.disks_flagged} disk{'s' * (risk.disks_flagged != 1)} SMART flags "
                     f"fail{'s' * (risk.disks_flagged == 1)} now: {_within(risk, risk.p_loss_flagged_out)}")
    lowering = _replacements(risk)
    lines += [f"- {head}: {text}" for head, text in zip(("what lowers it most", "next", "then"), lowering)]
    if not lowering and risk.parity_fixed and risk.p_loss and risk.p_loss[-1] > PARITY_NOTE_ABOVE:
        # the one step left would be more parity, which a raidz or dRAID cannot take in place; said only
        # where the risk is above the strictest data level's budget, as a pool far below it needs none
        one = len(risk.parity_fixed) == 1
        lines.append(f"- more parity: {', '.join(risk.parity_fixed)} keep{'s' * one} the parity "
                     f"{'it was' if one else 'they were'} created with (zpool cannot raise a raidz's or dRAID's in place; a new pool with more, "
                     "then zfs send | zfs receive, does)")
    return lines


# the strictest budget of any data level (archive's 1 in 1,000,000 over five years, model/recommend.py)
PARITY_NOTE_ABOVE = min(d.max_loss for d in DATA_LEVELS.values())


def _replacements(risk: RiskNow) -> list[str]:
    """The disk replacements and the added sides that lower the risk, the one that lowers the year ahead
    most first."""
    options = []
    if risk.p_loss_flagged_replaced:
        n = len(risk.flagged_raised)
        which = f"the disk SMART flags, {risk.flagged_raised[0]}," if n == 1 else f"the {n} disks SMART flags"
        one = "a new one" if n == 1 else "new ones"
        options.append((risk.p_loss_flagged_replaced, f"replacing {which} with {one}"))
    if risk.p_loss_oldest_replaced:
        options.append((risk.p_loss_oldest_replaced, f"replacing the oldest disk, {risk.oldest_disk} "
                                                     f"({risk.oldest_age_years:.1f} y), with a new one"))
    if risk.p_loss_parity_added:
        n = len(risk.parity_vdevs)
        which = risk.parity_vdevs[0] if n == 1 else f"each of its {n} mirrors and plain disks"
        command = risk.parity_commands[0].rsplit(" ", 2)[0]   # zpool attach POOL, then its side and the new disk
        how = f"1 new disk, `{command} DISK NEW`" if n == 1 else f"{n} new disks, one `{command} DISK NEW` each"
        options.append((risk.p_loss_parity_added, f"attaching one more side to {which} ({how})"))
    return [f"{text}: {_within(risk, p)}" for p, text in sorted(options)]


def risk_record(risk: RiskNow) -> dict:
    def by_year(values):
        return {f"{y:g}": v for y, v in zip(risk.years, values)} if values else None
    return {"disk_class": risk.disk_class or None, "p_loss": by_year(risk.p_loss),
            "p_loss_repaired": by_year(risk.p_loss_repaired), "p_loss_flagged_out": by_year(risk.p_loss_flagged_out),
            "disks_out": risk.disks_out, "disks_flagged": risk.disks_flagged, "reason": risk.reason,
            "rate_basis": (None if risk.reason else "age" if risk.by_age else "class"),
            "rates": [{"vdev": r.vdev, "afr": by_year(r.afr_per_year), "disks": r.disks, "disks_aged": r.disks_aged,
                       "mean_age_years": r.mean_age_years,
                       "batch": {"disks": r.batch_disks, "model": r.batch_model, "rate_factors": list(r.batch_factors),
                                 "frailty_variance": BATCH_FRAILTY_VARIANCE} if r.batch_disks else None,
                       "flagged": [{"disk": d, "counter": sig.counter, "factor": sig.factor,
                                    "days": FLAGGED_HOURS // 24, "after_factor": sig.after_factor}
                                   for d, sig in r.flagged],
                       "text": rate_text(risk, r)} for r in risk.rates],
            "notes": list(risk.notes),
            "oldest_replaced": {"disk": risk.oldest_disk, "age_years": risk.oldest_age_years,
                                "p_loss": by_year(risk.p_loss_oldest_replaced)} if risk.p_loss_oldest_replaced else None,
            "flagged_replaced": {"disks": list(risk.flagged_raised), "p_loss": by_year(risk.p_loss_flagged_replaced)}
            if risk.p_loss_flagged_replaced else None,
            "parity_added": {"vdevs": list(risk.parity_vdevs), "new_disks": len(risk.parity_commands),
                             "commands": list(risk.parity_commands), "p_loss": by_year(risk.p_loss_parity_added)}
            if risk.p_loss_parity_added else None,
            "parity_fixed": list(risk.parity_fixed)}
