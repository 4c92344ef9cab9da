"""The scenario suite (docs/recommend.md#scenarios): pools people build, each with the answer an
experienced ZFS engineer gives and where that answer comes from. The rule in model/recommend.py is
written without these cases in mind; they judge it. A case states what the expert insists on (a
family of layouts, a floor on safety, a layout that must be shown), not one exact string, unless
the sources name one."""

from functools import lru_cache

import pytest

from zfslab.model.disk_types import DISK_TYPES
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import VdevKind
from zfslab.model.cost import DiskPrices
from zfslab.model.plan import mixed_disk_set, plan
from zfslab.model.recommend import Goal, recommend
from zfslab.model.reliability.params import params_for_class
from zfslab.model.units import TB


@lru_cache(maxsize=None)
def rows_for(parts: tuple[tuple[int, float], ...], disk_type: str, disk_price: str | None = None, space_block: int = 0):
    """The plan's rows; space_block as `zfslab plan` passes it for the goal's workload (vm, database: 16K)."""
    disks = mixed_disk_set([(n, int(tb * TB)) for n, tb in parts])
    kind = DISK_TYPES[disk_type]
    risk = params_for_class(disk_type, disks.disk_bytes, years=(5.0,))
    prices = DiskPrices(((None, float(disk_price)),)) if disk_price else None
    return tuple(plan(disks, risk=risk, speed=kind.speed, prices=prices, space_block=space_block))


def goal_of(goal: dict) -> tuple[Goal, str | None]:
    """The case's Goal, and its --disk-price (a case's goal may carry one)."""
    goal = dict(goal)
    price = goal.pop("disk_price", None)
    return Goal(**goal), price


def kinds(layout: str) -> set[tuple[VdevKind, int]]:
    return {(g.kind, g.parity) for g in parse_layout(layout).groups}


# What the expert insists on: named checks on (pick, recommendation), so the table reads as prose.
def mirrors(rec, row):
    return {k for k, _ in kinds(rec.layout)} == {VdevKind.MIRROR}


def stripe(rec, row):
    return kinds(rec.layout) == {(VdevKind.DISK, 0)}


def raidz2_3_to_9(rec, row):
    lay = parse_layout(rec.layout)
    return kinds(rec.layout) == {(VdevKind.RAIDZ, 2)} and all(3 <= g.width <= 9 for g in lay.groups)


def survives(n):
    def check(rec, row):
        return row.failures_guaranteed >= n
    check.__name__ = f"survives_{n}"
    return check


def parity_2_or_draid_spare(rec, row):
    lay = parse_layout(rec.layout)
    return row.failures_guaranteed >= 2 and all(g.kind is not VdevKind.DRAID or g.draid_spares for g in lay.groups)


def draid_with_spare(rec, row):
    return all(g.kind is VdevKind.DRAID and g.draid_spares >= 1 for g in parse_layout(rec.layout).groups)


def no_draid(rec, row):
    return all(g.kind is not VdevKind.DRAID for g in parse_layout(rec.layout).groups)


def is_(layout):
    def check(rec, row):
        return rec.layout == layout
    check.__name__ = f"is {layout}"
    return check


def not_(layout):
    def check(rec, row):
        return rec.layout != layout
    check.__name__ = f"not {layout}"
    return check


def listed(layout):
    def check(rec, row):
        return layout in rec.shortlist
    check.__name__ = f"{layout} listed"
    return check


def named_when_riskier(layout):
    """The safer layout appears in the reason with what it costs, unless it is the pick."""
    def check(rec, row):
        return rec.layout == layout or f"Safer: {layout}:" in rec.reason
    check.__name__ = f"{layout} named"
    return check


def each_size_own_vdevs(rec, row):
    return all(len(g.sizes) <= 1 for g in parse_layout(rec.layout).groups)


def one_kind(rec, row):
    return len({k for k, _ in kinds(rec.layout)}) == 1


def states_small_blocks(rec, row):
    return all(f"at {b}" in rec.reason for b in ("4K", "16K", "128K"))


def vdevs_at_least(n):
    def check(rec, row):
        return row.top_level_vdevs >= n
    check.__name__ = f"{n}+ vdevs"
    return check


def raidz_at_most(width):
    def check(rec, row):
        return all(g.width <= width for g in parse_layout(rec.layout).groups if g.kind is VdevKind.RAIDZ)
    check.__name__ = f"raidz at most {width} wide"
    return check


def raidz_parity_2_plus(rec, row):
    return all(k is VdevKind.RAIDZ and p >= 2 for k, p in kinds(rec.layout))


def two_way_mirrors(rec, row):
    return kinds(rec.layout) == {(VdevKind.MIRROR, 1)}


def three_way_mirrors_listed(rec, row):
    """A pool of 3-way mirrors (hot spares beside them allowed) is on the short list."""
    return any({(g.kind, g.width) for g in parse_layout(x).groups} == {(VdevKind.MIRROR, 3)} for x in rec.shortlist)


def raidz_listed(rec, row):
    """A raidz layout is on the short list (below dRAID's threshold, raidz is the alternative)."""
    return any(VdevKind.RAIDZ in {k for k, _ in kinds(x)} for x in rec.shortlist)


def no_draid_listed(rec, row):
    return not any(VdevKind.DRAID in {k for k, _ in kinds(x)} for x in rec.shortlist)


# (disks ((count, TB), ...), disk type, goal, what the expert insists on, source in docs/recommend.md)
SCENARIOS = [
    ("2x4TB home", ((2, 4),), "hdd", {}, (mirrors,), "two disks: a mirror is the only redundancy [oracle-redundancy]"),
    ("2x1TB ssd scratch", ((2, 1),), "ssd", {"data": "scratch", "priority": "space"}, (stripe,),
     "scratch asks for no redundancy: space wins [oracle-redundancy]"),
    ("3x24TB home", ((3, 24),), "hdd", {}, (survives(1), listed("mirror:3"), named_when_riskier("mirror:3")),
     "three 24 TB disks: raidz1:3 is inside the home budget once read errors are the field's (a 24 TB resilver "
     "meets a latent error 1 time in 400, not in most resilvers as 1e-14 per bit claims); the 3-way mirror and its "
     "cost are shown [field-lse], [oracle-raidz2]"),
    ("4x4TB home", ((4, 4),), "hdd", {}, (survives(1), listed("raidz2:4"), named_when_riskier("raidz2:4")),
     "issue 23: raidz2:4 has the space of raidz1:3+spare:1 and survives two: it must be shown [oracle-raidz2]"),
    ("4x4TB media space", ((4, 4),), "hdd", {"data": "media", "priority": "space"}, (is_("raidz1:4"),),
     "replaceable data on small disks, most space: single parity, its short resilver inside the budget [oracle-raidz2]"),
    ("5x12TB home", ((5, 12),), "hdd", {}, (raidz2_3_to_9,), "double parity for 12 TB disks [oracle-raidz2]"),
    ("6x20TB media", ((6, 20),), "hdd", {"data": "media"}, (is_("raidz2:6"),),
     "issue 23: raidz2:6 has 2xraidz1:3's space and streaming speed and is 1000x safer; raidz1:6's resilver of a "
     "20 TB disk puts the pool past media's pool-loss budget [oracle-raidz2], [leventhal-triple-parity]"),
    ("8x16TB media", ((8, 16),), "hdd", {"data": "media"}, (is_("raidz2:8"),),
     "16 TB disks: double parity even for replaceable media [oracle-raidz2], [leventhal-triple-parity]"),
    ("6x20TB media general", ((6, 20),), "hdd", {"data": "media", "workload": "general"},
     (listed("raidz2:6"), named_when_riskier("raidz2:6")),
     "with 4K reads counted, 2xraidz1:3 may stand, but raidz2:6 and its cost are shown [oracle-raidz2]"),
    ("6x8TB vm", ((6, 8),), "hdd", {"workload": "vm"}, (mirrors,),
     "issue 23: mirrors for random I/O [oracle-mirrors], [ix-whitepaper]"),
    ("6x16TB home", ((6, 16),), "hdd", {}, (is_("raidz2:6"),), "raidz2 at 6 disks (4+2) [oracle-raidz2]"),
    ("8x12TB business", ((8, 12),), "hdd", {"data": "business"}, (raidz2_3_to_9,),
     "two failures for business data, raidz2 of at most 9 [oracle-raidz2], [zpoolconcepts-width]"),
    ("8x12TB home bulk space", ((8, 12),), "hdd", {"workload": "bulk", "priority": "space"}, (is_("raidz2:8"),),
     "large files, most space: one raidz2 [oracle-raidz2], [ix-whitepaper]"),
    ("8x2TB ssd database", ((8, 2),), "ssd", {"workload": "database"}, (mirrors,),
     "databases on mirrors [oracle-mirrors], [ix-whitepaper]"),
    ("8x4TB ssd database speed", ((8, 4),), "ssd", {"workload": "database", "priority": "speed"}, (mirrors,),
     "as fast as can be for a database: mirrors [oracle-mirrors]"),
    ("10x18TB archive", ((10, 18),), "hdd", {"data": "archive"}, (parity_2_or_draid_spare,),
     "archive: two failures or more, dRAID only with its spare [oracle-raidz2], [openzfs-draid]"),
    ("12x10TB backup", ((12, 10),), "hdd", {"data": "backup"}, (parity_2_or_draid_spare,),
     "a backup target of large disks: double parity, dRAID only with its spare [oracle-raidz2], [openzfs-draid]"),
    ("12x4TB scratch space", ((12, 4),), "hdd", {"data": "scratch", "priority": "space"}, (stripe,),
     "scratch: a stripe, warned [oracle-redundancy]"),
    ("12x8TB safety", ((12, 8),), "hdd", {"priority": "safety"}, (survives(3),),
     "safety first: triple parity or 4-way mirrors [oracle-raidz2]"),
    ("12x4TB home cost", ((12, 4),), "hdd", {"priority": "cost", "disk_price": "90"}, (raidz2_3_to_9,),
     "the least money per usable TB in budget: the widest double-parity vdevs practice allows "
     "[wintelguy-cost], [oracle-raidz2], [zpoolconcepts-width]"),
    ("16x1TB nvme vm business", ((16, 1),), "nvme", {"workload": "vm", "data": "business"},
     (survives(2), vdevs_at_least(4), no_draid),
     "VMs want many vdevs [oracle-mirrors]; business two failures; no dRAID under small blocks [zpoolconcepts-draid]"),
    ("16x18TB business database", ((16, 18),), "hdd", {"data": "business", "workload": "database"},
     (survives(2), no_draid), "no single parity for business [oracle-raidz2]; small blocks: no dRAID [zpoolconcepts-draid]"),
    ("24x4TB home", ((24, 4),), "hdd", {}, (raidz2_3_to_9,), "raidz2 vdevs of 3 to 9 [zpoolconcepts-width], [oracle-raidz2]"),
    ("24x4TB space", ((24, 4),), "hdd", {"priority": "space"}, (no_draid, survives(1)),
     "issue 23: general data has small files; dRAID pads them to 8-disk stripes [zpoolconcepts-draid]"),
    ("24x4TB space bulk", ((24, 4),), "hdd", {"priority": "space", "workload": "bulk"},
     (no_draid, raidz_at_most(12), survives(2)),
     "24 children rebuild a dRAID2 of 8 data disks only 2.4x faster than raidz: not worth its fixed width; "
     "wide raidz2 for large files [truenas-draid], [openzfs-draid], [width-large-records]"),
    ("24x4TB business vm speed", ((24, 4),), "hdd", {"data": "business", "workload": "vm", "priority": "speed"},
     (mirrors, survives(2)), "3-way mirrors: VMs and two failures [oracle-mirrors]"),
    ("24x24TB media", ((24, 24),), "hdd", {"data": "media"}, (survives(2),),
     "24 TB disks: a second parity even for media, as P(loss) of raidz1 breaks the budget [oracle-raidz2]"),
    ("36x16TB business", ((36, 16),), "hdd", {"data": "business"}, (raidz_parity_2_plus, raidz_at_most(9)),
     "many raidz2 (or raidz3) vdevs of 3 to 9 [zpoolconcepts-width]"),
    ("48x20TB archive", ((48, 20),), "hdd", {"data": "archive"}, (parity_2_or_draid_spare, raidz_at_most(12)),
     "a large pool of streaming data: dRAID3 with a distributed spare (48 children: 4.4x faster rebuilds) or "
     "raidz3 vdevs up to 12 wide [openzfs-draid], [width-large-records]"),
    ("60x12TB backup", ((60, 12),), "hdd", {"data": "backup"}, (parity_2_or_draid_spare,),
     "60 disks: dRAID's sequential rebuild or raidz2 vdevs [openzfs-draid], [oracle-raidz2]"),
    ("60x20TB media space", ((60, 20),), "hdd", {"data": "media", "priority": "space"}, (draid_with_spare,),
     "the most space from 60 large disks for big files: dRAID with a spare [openzfs-draid]"),
    # issue 35: read errors from the field, dRAID only where its rebuild pays, width by workload
    ("8x8TB database", ((8, 8),), "hdd", {"workload": "database"}, (two_way_mirrors, vdevs_at_least(4)),
     "a database on eight HDDs: 4 x 2-way mirrors, their damage risk from field read errors inside the budget "
     "[oracle-mirrors], [ix-whitepaper], [field-lse]"),
    ("6x8TB vm", ((6, 8),), "hdd", {"workload": "vm"}, (mirrors, vdevs_at_least(3)),
     "VMs on six HDDs: 3 x 2-way mirrors for IOPS [oracle-mirrors], [field-lse]"),
    ("4x8TB database", ((4, 8),), "hdd", {"workload": "database"}, (two_way_mirrors,),
     "four disks for a database: 2 x 2-way mirrors [oracle-mirrors], [field-lse]"),
    ("12x4TB hdd vm", ((12, 4),), "hdd", {"workload": "vm"}, (mirrors, vdevs_at_least(4)),
     "VMs on twelve HDDs: many mirror vdevs [oracle-mirrors], [ix-whitepaper]"),
    ("12x16TB archive", ((12, 16),), "hdd", {"data": "archive"}, (no_draid, survives(2), raidz_listed),
     "12 children: dRAID's spare rebuilds 1.2x faster than raidz, no material gain; raidz on the short list "
     "[truenas-draid], [openzfs-draid]"),
    ("12x10TB media bulk", ((12, 10),), "hdd", {"data": "media", "workload": "bulk"}, (no_draid, no_draid_listed),
     "media on 12 disks: raidz, dRAID is for many more children [truenas-draid], [openzfs-draid]"),
    ("12x12TB media", ((12, 12),), "hdd", {"data": "media"}, (no_draid, raidz_at_most(12)),
     "media on 12 disks: raidz vdevs up to 12 wide [truenas-draid], [width-large-records]"),
    ("20x10TB backup", ((20, 10),), "hdd", {"data": "backup"}, (no_draid, survives(2), raidz_at_most(12)),
     "a backup target of 20 disks: raidz2 vdevs, dRAID's rebuild gain too small to pay for its fixed width "
     "[truenas-draid], [oracle-raidz2], [width-large-records]"),
    ("36x18TB archive", ((36, 18),), "hdd", {"data": "archive"}, (survives(2), raidz_at_most(12)),
     "an archive of 36 disks: raidz2/raidz3 vdevs up to 12 wide are common practice [width-large-records]"),
    ("96x18TB archive", ((96, 18),), "hdd", {"data": "archive"}, (parity_2_or_draid_spare, raidz_at_most(12)),
     "96 disks: dRAID with a distributed spare rebuilds many times faster, or raidz vdevs up to 12 "
     "[openzfs-draid], [truenas-draid]"),
    ("8x20TB home", ((8, 20),), "hdd", {}, (raidz_parity_2_plus, raidz_at_most(9)),
     "general data on eight 20 TB disks: one raidz2 [oracle-raidz2], [leventhal-triple-parity]"),
    ("4x4TB enterprise database", ((4, 4),), "hdd-enterprise", {"workload": "database"}, (two_way_mirrors,),
     "a database on four enterprise disks: 2 x 2-way mirrors [oracle-mirrors], [field-lse]"),
    # issue 35 item 2, a review on scenarios outside the suite: a backup target's pool-loss budget is
    # media's, as docs/recommend.md#1-the-data-level-sets-the-budget says; at 1 in 1,000 these got raidz1
    ("6x20TB backup", ((6, 20),), "hdd", {"data": "backup"}, (survives(2),),
     "a backup target of six 20 TB disks: raidz1:6's resilvers (1 in 2,700) are past media's budget, which a "
     "backup carries; raidz2:6 [oracle-raidz2], [leventhal-triple-parity]"),
    ("10x12TB backup", ((10, 12),), "hdd", {"data": "backup"}, (survives(2), raidz_at_most(12)),
     "ten 12 TB disks as a backup target: raidz2:10, not a 10-wide raidz1 (1 in 1,100) [oracle-raidz2], "
     "[leventhal-triple-parity]"),
    # the short list kept both ends of space and the safest, and spread the rest over space: the fastest
    # layout in budget, the 3-way mirrors a database of business data is built on, was left out
    ("20x4TB ssd database business", ((20, 4),), "ssd", {"data": "business", "workload": "database"},
     (survives(2), three_way_mirrors_listed),
     "a business database on twenty SSDs: 3-way mirrors, the fastest layout that survives two failures, are "
     "shown [oracle-mirrors], [ix-whitepaper]"),
    # issue 35 item 2, a review: space for VMs and databases is what their 16K blocks get. raidz stores
    # each with its own parity and padding, so zfs list's 128K figure overstates it (docs/recommend.md
    # #space-at-the-workloads-block-size); with it, these picked 2xraidz2:5, 3xraidz2:4 and raidz1:7+spare:1
    ("10x4TB business vm", ((10, 4),), "hdd", {"data": "business", "workload": "vm"}, (mirrors, survives(2)),
     "business VMs on ten HDDs: 3-way mirrors; raidz2:5 stores a 16K zvol block in 9 sectors (44 % where zfs "
     "list counts 59 %) [oracle-mirrors], [ahrens-raidz], [openzfs-zvol]"),
    ("12x4TB ssd business vm", ((12, 4),), "ssd", {"data": "business", "workload": "vm"}, (mirrors, survives(2)),
     "business VMs on twelve SSDs: 3-way mirrors, not raidz2:4, whose 16K blocks take 9 sectors of which 4 "
     "hold data [oracle-mirrors], [ahrens-raidz], [openzfs-zvol]"),
    ("8x4TB vm space", ((8, 4),), "hdd", {"workload": "vm", "priority": "space"}, (is_("raidz2:8"),),
     "the most space for VMs on eight disks: a 16K block takes 6 sectors on raidz1:7 as on raidz2:8, so "
     "raidz2:8 holds more and survives two [ahrens-raidz], [oracle-raidz2]"),
    ("4x12TB+4x8TB home", ((4, 12), (4, 8)), "hdd", {}, (each_size_own_vdevs, survives(1)),
     "disks of two sizes: a vdev per size, no space wasted [oracle-redundancy] (similar size disks)"),
    ("6x16TB+6x8TB business", ((6, 16), (6, 8)), "hdd", {"data": "business"}, (each_size_own_vdevs, one_kind, survives(2)),
     "two sizes, business: double parity per size, one kind of vdev [oracle-raidz2], [oracle-redundancy]"),
    ("2x4TB+2x2TB ssd vm", ((2, 4), (2, 2)), "ssd", {"workload": "vm"}, (mirrors, each_size_own_vdevs),
     "mirrors of like disks [oracle-mirrors]"),
]


@pytest.mark.parametrize("name,parts,disk_type,goal,checks,source", SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_scenario(name, parts, disk_type, goal, checks, source):
    goal, price = goal_of(goal)
    rows = list(rows_for(parts, disk_type, price, goal.work.space_block_bytes))
    rec = recommend(rows, goal)
    row = next(r for r in rows if r.layout == rec.layout)
    assert rec.within_budget, rec.reason
    failed = [c.__name__ for c in checks if not c(rec, row)]
    assert not failed, f"{name}: {rec.layout} fails {failed} ({source}); short list {rec.shortlist}"


def test_the_suite_covers_what_issue_23_asks():
    counts = [sum(n for n, _ in s[1]) for s in SCENARIOS]
    sizes = [tb for s in SCENARIOS for _, tb in s[1]]
    assert len(SCENARIOS) >= 40 and min(counts) == 2 and max(counts) == 96 and min(sizes) == 1 and max(sizes) == 24
    types = {s[2] for s in SCENARIOS}
    assert {"hdd", "ssd"} <= types
    goals = [goal_of(s[3])[0] for s in SCENARIOS]
    from zfslab.model.recommend import DATA_LEVELS, PRIORITIES, WORKLOADS
    assert {g.data for g in goals} == set(DATA_LEVELS) and {g.workload for g in goals} == set(WORKLOADS)
    assert {g.priority for g in goals} == set(PRIORITIES)
    assert any(len(s[1]) > 1 for s in SCENARIOS)


def test_every_case_names_sources_the_docs_define():
    """Each case's reason cites at least one source, and each cited tag is in docs/recommend.md's Sources."""
    import re
    from pathlib import Path
    text = (Path(__file__).parents[2] / "docs" / "recommend.md").read_text()
    defined = set(re.findall(r"^- \[([a-z0-9-]+)\]", text.split("## Sources")[-1], re.M))
    for name, *_, source in SCENARIOS:
        cited = set(re.findall(r"\[([a-z0-9-]+)\]", source))
        assert cited and cited <= defined, (name, cited - defined)


def test_the_datasheet_model_keeps_its_verdicts():
    """The same rule on the datasheet's 1e-14 per bit: 2-way mirrors of 8 TB damage files too often
    for home data, so the database gets 4-way mirrors: the change of answer is the error model's."""
    from zfslab.model.plan import disk_set
    disks = disk_set(8, 8 * TB)
    risk = params_for_class("hdd", disks.disk_bytes, years=(5.0,), error_model="datasheet")
    rows = plan(disks, risk=risk, speed=DISK_TYPES["hdd"].speed)
    rec = recommend(rows, Goal(workload="database"))
    why = {v.layout: v.why_out for v in rec.over_budget}
    assert rec.layout == "2xmirror:4" and any(w.startswith("P(damage)") for w in why["4xmirror:2"])
    field = recommend(list(rows_for(((8, 8),), "hdd", None, 16384)), Goal(workload="database"))
    assert field.layout == "4xmirror:2"
