"""`zpool create`'s vdev list (or `zpool status`'s words) read back into a Layout: the inverse of
model/zpool_syntax.py zpool_vdev_args."""

from __future__ import annotations

import re

from zfslab.errors import LayoutError
from zfslab.model.layout_grammar import parse_draid, parse_token
from zfslab.model.layouts import (CLASSES, ClassGroup, Layout, VdevGroup, VdevKind, class_order, merge_classes,
                                  merge_groups)


def parse_zpool_vdevs(words: list[str] | str) -> tuple[Layout, list[str]]:
    """Layout and devices from a `zpool create` vdev list: 'raidz2 sda sdb ... mirror sdx sdy spare sdz',
    with `special`, `dedup`, `log` and `cache` sections as zpool_vdev.c construct_spec reads them.
    The devices come back in zpool_vdev_args order (data, classes, spares, cache)."""
    if isinstance(words, str):
        words = words.split()
    groups: list[VdevGroup] = []
    data_devices: list[str] = []
    classes: list[ClassGroup] = []
    class_devices: list[list[str]] = []  # per entry of classes
    spare_devices: list[str] = []
    cache_devices: list[str] = []
    section = "data"  # data, special, dedup, log, spare or cache: where the next vdev goes
    seen: set[str] = set()
    current: tuple[str, list[str]] | None = None  # (keyword, its devices)

    def add(group: VdevGroup, devs: list[str]) -> None:
        if section == "data":  # also after 'spare' or 'cache', which end a class section
            groups.append(group)
            data_devices.extend(devs)
        else:
            classes.append(ClassGroup(section, group))
            class_devices.append(devs)

    def close() -> None:
        if current is None:
            return
        keyword, devs = current
        if not devs:
            raise LayoutError(f"'{keyword}' in the vdev list has no devices after it")
        if keyword.startswith("draid"):
            spec = keyword if re.search(r":[0-9]+c", keyword) else f"{keyword}:{len(devs)}c"
            g = parse_draid(spec, 1, keyword)
            if g.width != len(devs):
                raise LayoutError(f"{keyword} names {g.width} children but {len(devs)} devices follow it")
            add(g, devs)
        else:
            item = parse_token(f"{keyword}:{len(devs)}")
            assert isinstance(item, VdevGroup)
            add(item, devs)

    for word in words:
        low = word.lower()
        if low in ("spare", "cache", *CLASSES):
            close()
            current = None
            if low in ("spare", "cache", "log") and low in seen:
                raise LayoutError(f"'{low}' can be given only once in a zpool create vdev list")
            seen.add(low)
            section = low
        elif low == "mirror" or re.fullmatch(r"raidz[0-9]*", low) or low.startswith("draid"):
            close()
            if section in ("spare", "cache"):
                section = "data"  # a grouping keyword ends the list of spares or cache devices
            if section in CLASSES and low != "mirror":
                raise LayoutError(f"'{low}': zpool create takes only mirrors or single disks as {section} vdevs")
            current = (low, [])
        elif current is not None:
            current[1].append(word)
        elif section == "spare":
            spare_devices.append(word)
        elif section == "cache":
            cache_devices.append(word)
        else:
            add(VdevGroup(VdevKind.DISK, width=1), [word])
    close()
    if not groups:
        raise LayoutError("the vdev list holds no data vdev; e.g. 'raidz2 sda sdb sdc sdd sde sdf'")
    layout = Layout(merge_groups(groups), len(spare_devices), 0, merge_classes(classes), len(cache_devices))
    order = sorted(range(len(classes)), key=lambda i: class_order(classes[i]))  # as merge_classes
    return layout, data_devices + [d for i in order for d in class_devices[i]] + spare_devices + cache_devices


# pool_namecheck (module/zcommon/zfs_namecheck.c) with zpool_name_valid's wider reserved set for
# a new pool (lib/libzfs/libzfs_pool.c); ZFS also takes a space, which we refuse: scripts split on it.
