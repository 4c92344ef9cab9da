"""What bench and drill share about the pools and disks they use: refusing a layout zpool would
refuse without -f, destroying only a leftover pool zfslab recorded, and wiping a disk back to empty.
(These lived in system/bench.py, where drill borrowed them.)"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from zfslab.errors import LayoutError
from zfslab.model.layouts import Layout
from zfslab.model.zpool_syntax import replication_mismatch
from zfslab.system.disks import DisksRefused, partitions, udev_settle, zero_samples
from zfslab.system.processes import end_engines_on
from zfslab.system.runner import Runner
from zfslab.system.zfs import ZfsDriver


class MixedReplication(LayoutError):
    """layout {} mixes replication levels ({}): zpool create refuses that without -f ("mismatched replication
    level"), and zfslab never passes -f; {}"""

    def __str__(self) -> str:
        return " ".join(super().__str__().split())  # one line, whatever the docstring's wrapping


def check_replication(layout: Layout, fix: str) -> None:
    """Refuse, before any disk is touched, a layout that `zpool create` would refuse without -f
    (model/layouts.py repeats zpool's get_replication()). zfslab does not force it: -f also
    overrides zpool's own checks that the disks are unused. `fix` is the next step to offer (a
    setting in backquotes, `layouts`, is worded by the command layer as its flag)."""
    why = replication_mismatch(layout)
    if why is not None:
        raise MixedReplication(layout, why, fix)


@dataclass(frozen=True)
class OwnPool:
    """An imported pool a run of zfslab left behind and proved its own (recognised_pool): its GUID
    was recorded, or (`mark` set) only the create's intent was, whose `layout` the GUID is then
    recorded under before the pool is destroyed."""

    name: str
    guid: str
    mark_prop: str = ""
    mark: str = ""
    layout: str = ""

    @property
    def adopted(self) -> bool:
        return bool(self.mark)


def own_leftover(zfs: ZfsDriver, name: str, guids: set[str] | frozenset[str],
                 intents: dict[tuple[str, str], str] | None = None, mark_prop: str = "", *,
                 refuse_others: bool = True) -> OwnPool | None:
    """The imported pool `name` when it is zfslab's own (recognised_pool), None when there is none.
    Any other pool of that name is someone else's: refused (DisksRefused), never touched; with
    `refuse_others` False (a dry run, which says what the gate would do), None. Reads only."""
    if not zfs.pool_exists(name):
        return None
    own = recognised_pool(zfs, name, guids, intents, mark_prop)
    if own is None:
        if not refuse_others:
            return None
        raise DisksRefused(f"a pool named {name} (GUID {zfs.pool_guid(name)}) exists, and this results database "
                           f"did not create it; zfslab never destroys it: export or rename it (zpool export {name}), "
                           f"or use the database of the run that made it")
    guid, mark = own
    return OwnPool(name, guid, mark_prop, mark, intents[(name, mark)] if mark else "")


def adopt_line(own: OwnPool) -> str:
    """What a run says as it records the GUID of the pool a kill left before its record."""
    return (f"pool {own.name} (GUID {own.guid}) is the one this run was creating when it was interrupted "
            f"({own.mark_prop}={own.mark}, recorded before the create): recording its GUID")


def destroy_leftover(zfs: ZfsDriver, own: OwnPool, purpose: str, log: Callable[[str], None]) -> list[str]:
    """Destroy the pool own_leftover proved zfslab's, once its GUID is checked again (the plan was
    made from a read before the gate); first end the benchmark engines still working on it.
    Returns its name, or nothing if it is gone."""
    if not zfs.pool_exists(own.name):
        return []
    guid = zfs.pool_guid(own.name)
    if guid != own.guid:
        raise DisksRefused(f"pool {own.name} now has GUID {guid}, not {own.guid} as when this run was planned; "
                           f"zfslab never destroys it: export or rename it (zpool export {own.name})")
    mountpoint = zfs.get(own.name, "mountpoint")["mountpoint"].value
    if mountpoint.startswith("/"):
        for user in end_engines_on(mountpoint):
            log(f"ended {user.name} (pid {user.pid}), left running on {own.name} by an interrupted zfslab {purpose}")
    log(f"destroying pool {own.name}, left by an interrupted zfslab {purpose} run")
    zfs.destroy_pool(own.name, force=True)
    return [own.name]


def destroy_own_pool(zfs: ZfsDriver, name: str, guids: set[str], purpose: str, log: Callable[[str], None],
                     intents: dict[tuple[str, str], str] | None = None, mark_prop: str = "",
                     adopt: Callable[[str, str], None] = lambda guid, layout: None) -> list[str]:
    """Destroy the imported pool `name` if it is zfslab's own (own_leftover: its GUID recorded, or
    its create's intent and mark, when the run was killed between the create and the GUID's
    record: `adopt(guid, layout)` records the GUID before the pool is destroyed, so its labels stay
    provably zfslab's); any other pool of that name is refused, never touched. (drill does this
    before its plan; bench plans it as the first step, bench_plan.py.)"""
    own = own_leftover(zfs, name, guids, intents, mark_prop)
    if own is None:
        return []
    if own.adopted:
        log(adopt_line(own))
        adopt(own.guid, own.layout)
    return destroy_leftover(zfs, own, purpose, log)


def recognised_pool(zfs: ZfsDriver, name: str, guids: set[str] | frozenset[str],
                    intents: dict[tuple[str, str], str] | None = None, mark_prop: str = "") -> tuple[str, str] | None:
    """The imported pool `name` as zfslab's own: (its GUID, "") when the GUID was recorded, (its
    GUID, its mark) when only the create's intent was (a kill between the create and the GUID's
    record); None when it is someone else's. Reads only."""
    guid = zfs.pool_guid(name)
    if guid in guids:
        return guid, ""
    mark = zfs.get(name, mark_prop)[mark_prop].value if intents and mark_prop else ""
    if mark and mark != "-" and (name, mark) in intents:
        return guid, mark
    return None


def as_after_own_pool(zfs: ZfsDriver, name: str, guids: set[str] | frozenset[str], infos: list,
                      intents: dict[tuple[str, str], str] | None = None,
                      mark_prop: str = "") -> tuple[list, frozenset[str]]:
    """A dry run's view of the disks as the run's gate will see them, and the GUIDs it will know
    then: the imported pool `name`, when it is this run's own (recognised_pool: its GUID recorded,
    or the create's intent and mark, whose GUID the run records first), is destroyed before that
    gate (destroy_own_pool), so a disk that is busy only as it holds that pool's labels is no
    longer busy then, and its labels are zfslab's. Reads only; any other pool, or a disk with any
    other label, is left as found (refused)."""
    guids = frozenset(guids)
    if not (guids or intents) or not zfs.pool_exists(name):
        return infos, guids
    own = recognised_pool(zfs, name, guids, intents, mark_prop)
    if own is None:
        return infos, guids
    guid = own[0]
    return ([dataclasses.replace(i, findings=tuple(f for f in i.findings if f.kind != "busy"))
             if i.pool_guids == {guid} else i for i in infos], guids | {guid})


def wipe_line(device: str, *, sandbox: bool = False) -> str:
    """How a plan shows a wipe (wipe_devices): several commands, some of it done by zfslab itself."""
    if sandbox:
        return f"# wipe {device}: truncate the file to nothing and back to its size (sparse and empty again)"
    return (f"# wipe {device}: zpool labelclear -f and wipefs --all on each partition and the "
            f"disk, zero the sampled 4 KiB pages (one a MiB, up to 16,384), and make the kernel forget "
            f"partitions it still lists (docs/safety.md)")


def wipe_devices(runner: Runner, devices: list[str], *, sandbox: bool = False) -> None:
    """Clear the labels and partition table a destroyed pool leaves, and zero the regions the
    emptiness check samples (system/disks.py), so the disks read as empty again."""
    if sandbox:
        for d in devices:
            with open(d, "r+b") as f:
                size = f.seek(0, os.SEEK_END)
                f.truncate(0)
                f.truncate(size)
        return
    reals = [os.path.realpath(d) for d in devices]
    for real in reals:
        for part in partitions(runner, real):
            runner.run(["zpool", "labelclear", "-f", part], check=False)
            runner.run(["wipefs", "--all", "--quiet", part])
        runner.run(["wipefs", "--all", "--quiet", real])
    # every disk's pages at once: each fsync waits on its own disk, so the time is the slowest one's
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(reals)))) as pool:
        list(pool.map(zero_samples, reals))
    for real in reals:
        if partitions(runner, real):
            forget_partitions(runner, real)


def forget_partitions(runner: Runner, disk: str) -> None:
    """Make the kernel drop the partitions of a disk whose table was wiped. wipefs asks it to
    re-read the table (BLKRRPART) but gives up after 1.25 s if a partition is open, and udev
    opens each one to probe it after every write (docs/safety.md#a-busy-udev): the kernel then
    keeps partitions that are no longer on the disk, and the next zpool create cannot label it.
    Once udev has settled nothing holds them, and one re-read drops them."""
    udev_settle(runner)
    runner.run(["blockdev", "--rereadpt", disk], check=False)
    udev_settle(runner)
