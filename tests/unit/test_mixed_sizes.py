"""Disks of several sizes: the @SIZES grammar, capacity per vdev, candidates and plan rows
(docs/capacity.md#mixed-disk-sizes)."""

from __future__ import annotations

import json

import pytest

from zfslab.errors import LayoutError
from zfslab.model.candidates import candidate_layouts, fill_by_size, mixed_candidate_layouts
from zfslab.model.capacity import linux_whole_disk_osize, osizes, pool_capacity
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, size_text
from zfslab.model.zpool_syntax import replication_mismatch
from zfslab.model.plan import DiskSet, disk_set, mixed_disk_set, plan
from zfslab.model.units import GB, TB, TiB

OS12, OS8 = linux_whole_disk_osize(12 * TB), linux_whole_disk_osize(8 * TB)
HOME = {12 * TB: 8, 8 * TB: 4}


# ---- grammar ---------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "2xraidz2:4@12TB+raidz2:4@8TB", "raidz2:12@8x12TB/4x8TB", "raidz2:6@12TB+spare:1@12TB",
    "4xmirror:2@12TB+2xmirror:2@8TB", "draid2:8d:12c:1s@8x12TB/4x8TB", "8xdisk@12TB+4xdisk@8TB",
    "raidz1:5@12TB+raidz1:5@1x12TB/4x8TB+spare:2@12TB", "raidz2:6@3500GB", "mirror:2@4TiB", "disk@4000787030016",
])
def test_sized_layouts_round_trip(text):
    layout = parse_layout(text)
    assert str(layout) == text
    assert parse_layout(str(layout)) == layout


def test_sizes_are_written_in_their_shortest_exact_form():
    assert str(parse_layout("raidz2:6@3.5tb")) == "raidz2:6@3500GB"
    assert str(parse_layout("raidz2:6@2x8TB/4x12TB")) == "raidz2:6@4x12TB/2x8TB"  # largest first
    assert size_text(4 * TiB) == "4TiB" and size_text(12 * TB) == "12TB" and size_text(123) == "123"


def test_a_sized_layout_knows_its_disks():
    layout = parse_layout("2xraidz2:4@12TB+raidz2:4@2x12TB/2x8TB+spare:1@12TB")
    assert layout.sized and layout.disks == 13
    assert layout.disk_sizes() == {12 * TB: 11, 8 * TB: 2}
    assert layout.describe() == ("2 × raidz2, 4 wide (2 data + 2 parity) on 12 TB disks + raidz2, 4 wide "
                                 "(2 data + 2 parity) on 2 × 12 TB + 2 × 8 TB disks + 1 hot spare of 12 TB")


def test_neighbouring_groups_merge_only_on_the_same_disks():
    assert str(parse_layout("raidz2:6@12TB+raidz2:6@12TB")) == "2xraidz2:6@12TB"
    assert str(parse_layout("raidz2:6@12TB+raidz2:6@8TB")) == "raidz2:6@12TB+raidz2:6@8TB"


@pytest.mark.parametrize("text,message", [
    ("raidz2:6@12TB+raidz2:6", "raidz2:6@12TB+raidz2:6: give the disk size of every vdev and spare (e.g. "
                               "raidz2:6@12TB+raidz2:6@8TB+spare:1@12TB), or of none"),
    ("raidz2:6@12TB+spare:1", "raidz2:6@12TB+spare:1: give the disk size of every vdev and spare (e.g. "
                              "raidz2:6@12TB+raidz2:6@8TB+spare:1@12TB), or of none"),
    ("raidz2:6@4x12TB/1x8TB", "raidz2:6@4x12TB/1x8TB: the sizes name 5 disks but a vdev has 6"),
    ("raidz2:6@4x12TB/8TB", "raidz2:6@4x12TB/8TB: say how many disks of each size, e.g. @4x12TB/2x8TB"),
    ("raidz2:6@", "raidz2:6@: write the disk size after @, e.g. @12TB or @4x12TB/2x8TB"),
    ("spare:2@1x12TB/1x8TB", "spare:2@1x12TB/1x8TB: hot spares of one token are of one size; write "
                             "spare:1@12TB+spare:1@8TB"),
    ("raidz2:6@12TB+spare:1@12TB+spare:1@8TB", "raidz2:6@12TB+spare:1@12TB+spare:1@8TB: zfslab models hot "
                                               "spares of one size; give the largest disks as spares"),
])
def test_bad_sizes_say_what_to_write(text, message):
    with pytest.raises(LayoutError) as e:
        parse_layout(text)
    assert str(e.value) == message


def test_unsized_layouts_are_unchanged():
    for layout in candidate_layouts(24):
        assert not layout.sized and "@" not in str(layout)


# ---- zpool create's replication check ----------------------------------------------------------

@pytest.mark.parametrize("text,why", [
    ("raidz2:8@12TB+raidz2:4@8TB", None),  # raidz of one parity: any widths (2.1+)
    ("2xraidz2:4@12TB+raidz2:4@8TB", None),
    ("4xmirror:2@12TB+2xmirror:2@8TB", None),
    ("4xmirror:2@12TB+raidz1:4@8TB", None),  # 2.2+: a 2-way mirror and raidz1 both survive 1 failure
    ("raidz3:8@12TB+mirror:4@8TB", None),
    ("raidz2:8@12TB+raidz1:4@8TB", "both parity 2 and parity 1 vdevs are present"),
    ("raidz2:8@12TB+2xmirror:2@8TB", "each mirror vdev survives 1 failed disk, each raidz2 vdev 2"),
    ("raidz2:12@8x12TB/4x8TB", "a raidz vdev contains devices of different sizes"),
    ("2xmirror:3@12TB+mirror:3@2x12TB/1x8TB+mirror:3@8TB", "a mirror vdev contains devices of different sizes"),
    ("raidz2:6@6x4000787030016", None),
])
def test_replication_mismatch_of_sized_layouts(text, why):
    assert replication_mismatch(parse_layout(text)) == why


def test_children_within_zpool_fuzz_are_of_one_size():
    # zpool_vdev.c compares children's sizes with ZPOOL_FUZZ (16 MiB) of slack
    assert replication_mismatch(parse_layout("mirror:2@1x4000016000000/1x4000000000000")) is None
    assert replication_mismatch(parse_layout("mirror:2@1x4000017000000/1x4000000000000")) is not None


# ---- capacity --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["raidz2:6", "3xmirror:2", "draid2:8d:24c:1s", "4xdisk", "raidz1:5+spare:1"])
def test_one_size_sized_equals_unsized(text):
    plain = parse_layout(text)
    sized = parse_layout("+".join(t + ("@12TB" if t.startswith(("spare", "draid", "4x", "3x", "raidz")) else "")
                                  for t in text.split("+")))
    a = pool_capacity(plain, OS12, disk_bytes=12 * TB)
    b = pool_capacity(sized, osizes(sized))
    assert (a.size_bytes, a.usable_bytes, a.slop_bytes, a.raw_bytes) == (b.size_bytes, b.usable_bytes,
                                                                         b.slop_bytes, b.raw_bytes)
    assert b.wasted_bytes == 0


def test_a_vdev_spanning_sizes_counts_each_child_as_the_smallest():
    span = parse_layout("raidz2:6@4x12TB/2x8TB")
    cap = pool_capacity(span, osizes(span))
    small = pool_capacity(parse_layout("raidz2:6"), OS8)
    assert (cap.size_bytes, cap.usable_bytes) == (small.size_bytes, small.usable_bytes)
    assert cap.wasted_bytes == 4 * (OS12 - OS8)
    assert cap.raw_bytes == 4 * 12 * TB + 2 * 8 * TB


def test_vdevs_on_different_sizes_add_up_with_one_slop():
    layout = parse_layout("raidz2:8@12TB+raidz2:4@8TB")
    cap = pool_capacity(layout, osizes(layout))
    big = pool_capacity(parse_layout("raidz2:8"), OS12)
    small = pool_capacity(parse_layout("raidz2:4"), OS8)
    assert cap.size_bytes == big.size_bytes + small.size_bytes
    assert cap.normal_dspace_bytes == big.normal_dspace_bytes + small.normal_dspace_bytes
    assert cap.usable_bytes == cap.normal_dspace_bytes - cap.slop_bytes
    assert cap.usable_bytes == 83_595_767_054_336
    assert cap.vdev_sizes == ((12 * TB, OS12), (8 * TB, OS8)) and cap.vdev_bytes == OS8


def test_exact_vdev_sizes_are_taken_as_they_are():
    layout = parse_layout("raidz1:3@10GB+raidz1:3@20GB")
    assert osizes(layout, whole_disk=False) == {20 * GB: 20 * GB, 10 * GB: 10 * GB}


def test_a_sized_layout_needs_the_size_of_each_disk():
    layout = parse_layout("raidz2:8@12TB+raidz2:4@8TB")
    with pytest.raises(LayoutError, match="no vdev size given for disks of 8000000000000 bytes"):
        pool_capacity(layout, {12 * TB: OS12})
    with pytest.raises(LayoutError) as e:
        pool_capacity(parse_layout("raidz2:8"), {12 * TB: OS12})
    assert str(e.value) == ("raidz2:8: sizes per disk were given but the layout names none; write them in it, "
                            "e.g. raidz2:8@12TB+raidz2:4@8TB")
    with pytest.raises(LayoutError) as e:
        pool_capacity(layout, OS12)
    assert str(e.value) == ("raidz2:8@12TB+raidz2:4@8TB names the size of its disks, but one size was given for "
                            "all; leave out the @SIZES (zfslab plan and capacity read them)")


# ---- candidates ------------------------------------------------------------------------------

def test_mixed_candidates_use_every_disk_once_and_round_trip():
    layouts = mixed_candidate_layouts(HOME)
    names = [str(x) for x in layouts]
    assert len(names) == len(set(names))
    for layout in layouts:
        assert layout.disk_sizes() == HOME
        assert parse_layout(str(layout)) == layout


def test_mixed_candidates_group_by_size_first_then_span():
    names = [str(x) for x in mixed_candidate_layouts(HOME)]
    assert names[:3] == ["8xdisk@12TB+4xdisk@8TB", "4xmirror:2@12TB+2xmirror:2@8TB", "2xraidz1:4@12TB+raidz1:4@8TB"]
    for expected in ["raidz2:8@12TB+raidz2:4@8TB", "2xraidz2:4@12TB+raidz2:4@8TB", "raidz3:8@12TB+mirror:4@8TB",
                     "raidz2:12@8x12TB/4x8TB", "raidz2:6@12TB+raidz2:6@2x12TB/4x8TB",
                     "raidz2:11@7x12TB/4x8TB+spare:1@12TB", "draid2:8d:12c:1s@8x12TB/4x8TB"]:
        assert expected in names
    first_span = next(i for i, n in enumerate(names) if "/" in n)
    assert all("/" not in n for n in names[:first_span]) and "raidz3:8@12TB+mirror:4@8TB" in names[:first_span]
    # of each parity, the same shape on both sizes comes before a mix of shapes
    assert names.index("2xraidz1:4@12TB+raidz1:4@8TB") < names.index("4xmirror:2@12TB+raidz1:4@8TB")


def test_mixed_candidates_need_two_sizes():
    with pytest.raises(ValueError):
        mixed_candidate_layouts({4 * TB: 24})


def test_fill_by_size_puts_spares_and_vdevs_on_the_largest_disks():
    assert str(fill_by_size(parse_layout("2xraidz2:6"), HOME)) == "raidz2:6@12TB+raidz2:6@2x12TB/4x8TB"
    assert str(fill_by_size(parse_layout("raidz2:11+spare:1"), HOME)) == "raidz2:11@7x12TB/4x8TB+spare:1@12TB"
    assert str(fill_by_size(parse_layout("raidz2:8"), HOME)) == "raidz2:8@12TB"  # 4 × 8 TB left unused
    assert fill_by_size(parse_layout("raidz2:13"), HOME) is None
    assert fill_by_size(parse_layout("raidz2:9+spare:2"), {12 * TB: 1, 8 * TB: 10}) is None  # spares of 2 sizes


# ---- plan ------------------------------------------------------------------------------------

def test_one_size_is_the_plain_disk_set():
    assert mixed_disk_set([(12, 4 * TB), (12, 4 * TB)]) == disk_set(24, 4 * TB)
    ds = mixed_disk_set([(4, 8 * TB), (8, 12 * TB)])
    assert ds.count == 12 and ds.disk_bytes == 12 * TB and ds.vdev_bytes == OS12  # the largest: risk's bound
    assert ds.label == "8 × 12.00 TB + 4 × 8.00 TB"
    assert ds.sizes == HOME and ds.osizes == {12 * TB: OS12, 8 * TB: OS8}


def test_plan_of_mixed_disks_rows_are_sized_and_say_waste_and_force():
    rows = {r.layout: r for r in plan(mixed_disk_set([(8, 12 * TB), (4, 8 * TB)]))}
    assert len(rows) == len(mixed_candidate_layouts(HOME))
    best = rows["raidz2:8@12TB+raidz2:4@8TB"]
    assert best.usable_bytes == 83_595_767_054_336 and best.wasted_bytes == 0 and best.needs_force is None
    assert best.raw_bytes == 128 * TB and best.disks == 12
    span = rows["raidz2:12@8x12TB/4x8TB"]
    assert span.wasted_bytes == 8 * (OS12 - OS8)
    assert span.needs_force == "a raidz vdev contains devices of different sizes"
    assert span.shape == ("raidz2, 12 wide (10 data + 2 parity) on 8 × 12 TB + 4 × 8 TB disks; wastes 32.00 TB; "
                          "zpool create needs -f: a raidz vdev contains devices of different sizes")
    record = span.as_dict()
    assert record["wasted_bytes"] == span.wasted_bytes and record["unused_disks"] == 0
    assert record["zpool_create_needs_force"] == span.needs_force


def test_identical_disk_rows_keep_their_keys():
    row = plan(disk_set(6, 4 * TB), layouts=[parse_layout("raidz2:6")])[0]
    assert "wasted_bytes" not in row.as_dict() and row.shape == "raidz2, 6 wide (4 data + 2 parity)"


def test_unsized_layouts_are_filled_onto_mixed_disks():
    ds = mixed_disk_set([(8, 12 * TB), (4, 8 * TB)])
    row = plan(ds, layouts=[parse_layout("2xraidz2:6")])[0]
    assert row.layout == "raidz2:6@12TB+raidz2:6@2x12TB/4x8TB"


def test_unused_disks_need_allow_unused():
    with pytest.raises(LayoutError) as e:
        plan(disk_set(24, 4 * TB), layouts=[parse_layout("raidz2:22")])
    assert str(e.value) == "layout raidz2:22 uses 22 disks but the plan has 24"
    ds = mixed_disk_set([(24, 4 * TB)], allow_unused=True)
    row = plan(ds, layouts=[parse_layout("raidz2:22")])[0]
    assert row.unused_disks == 2 and row.shape == "raidz2, 22 wide (20 data + 2 parity); 2 disks unused"
    assert row.as_dict()["unused_disks"] == 2
    mixed = mixed_disk_set([(8, 12 * TB), (4, 8 * TB)])
    with pytest.raises(LayoutError) as e:
        plan(mixed, layouts=[parse_layout("raidz2:8@12TB")])
    assert str(e.value) == ("layout raidz2:8@12TB uses 8 disks but the plan has 12 (8 × 12.00 TB + 4 × 8.00 TB); "
                            "pass `allow_unused` to leave 4 unused")
    mixed = mixed_disk_set([(8, 12 * TB), (4, 8 * TB)], allow_unused=True)
    assert plan(mixed, layouts=[parse_layout("raidz2:8")])[0].unused_disks == 4


def test_a_sized_layout_must_fit_the_disks():
    with pytest.raises(LayoutError) as e:
        plan(mixed_disk_set([(8, 12 * TB), (4, 8 * TB)]), layouts=[parse_layout("raidz2:6@6x8TB")])
    assert str(e.value) == "layout raidz2:6@8TB uses 6 disks of 8TB but the plan has 4 (8 × 12.00 TB + 4 × 8.00 TB)"
    with pytest.raises(LayoutError, match="uses 13 disks but the plan has 12"):
        plan(mixed_disk_set([(8, 12 * TB), (4, 8 * TB)]), layouts=[parse_layout("raidz2:13")])


def test_plan_command_takes_several_sizes(run_cli):
    obj = json.loads(run_cli("plan", "8x12TB,4x8TB", "--json", "--no-speed").stdout)
    assert obj["disks"] == "8 × 12.00 TB + 4 × 8.00 TB" and obj["disk_count"] == 12
    names = [r["layout"] for r in obj["layouts"]]
    assert "raidz2:8@12TB+raidz2:4@8TB" in names
    assert json.loads(run_cli("plan", "8x12TB+4x8TB", "--json", "--no-speed").stdout)["layouts"] == obj["layouts"]


def test_plan_command_allow_unused(run_cli):
    obj = json.loads(run_cli("plan", "24x4TB", "--layouts", "raidz2:22", "--allow-unused", "--json").stdout)
    assert obj["layouts"][0]["unused_disks"] == 2


def test_disk_set_is_still_a_plain_record():
    assert DiskSet(6, 4 * TB, 4 * TB, False) == disk_set(6, 4 * TB, exact_vdev=True)
    assert isinstance(parse_layout("raidz2:6@4TB"), Layout)


# ---- capacity command ------------------------------------------------------------------------

def test_capacity_command_takes_the_sizes_from_the_layout(run_cli):
    obj = json.loads(run_cli("capacity", "raidz2:6@12TB+raidz2:6@2x12TB/4x8TB", "--json").stdout)
    assert obj["disk_sizes"] == [{"disk_bytes": 12 * TB, "vdev_bytes": OS12, "disks": 8},
                                 {"disk_bytes": 8 * TB, "vdev_bytes": OS8, "disks": 4}]
    assert obj["wasted_bytes"] == 2 * (OS12 - OS8) == obj["vdevs"][1]["wasted_bytes"]
    assert obj["vdevs"][0]["wasted_bytes"] == 0 and obj["raw_bytes"] == 128 * TB
    assert obj["zpool_create_needs_force"] == "a raidz vdev contains devices of different sizes"
    assert obj["usable_bytes"] == 79_762_475_188_224


def test_capacity_command_exact_sizes(run_cli):
    obj = json.loads(run_cli("capacity", "raidz2:6@20GB+mirror:3@10GB", "--exact-sizes", "--json").stdout)
    layout = parse_layout("raidz2:6@20GB+mirror:3@10GB")
    assert obj["usable_bytes"] == pool_capacity(layout, osizes(layout, whole_disk=False)).usable_bytes
    assert obj["zpool_create_needs_force"] is None  # a 3-way mirror and raidz2 both survive 2 failures


def test_capacity_command_text_shows_each_size_and_the_waste(run_cli):
    out = run_cli("capacity", "raidz2:12@8x12TB/4x8TB").stdout
    assert "12TB disk" in out and "8TB disk" in out and "; 8 disks" in out
    assert "wasted" in out and "zpool create refuses this layout without -f: a raidz vdev contains devices" in out


@pytest.mark.parametrize("args,message", [
    (["capacity", "raidz2:6@4TB", "--disk-size", "4TB"],
     "zfslab: error: raidz2:6@4TB gives the size of its disks; leave out --vdev-bytes and --disk-size "
     "(--exact-sizes takes the sizes as exact vdev bytes)\n"),
    (["capacity", "raidz2:6", "--exact-sizes"],
     "zfslab: error: --exact-sizes: raidz2:6 gives no sizes; write them in it, e.g. raidz2:8@12TB+raidz2:4@8TB\n"),
])
def test_capacity_command_size_errors(run_cli, args, message):
    r = run_cli(*args)
    assert (r.exit_code, r.stderr) == (2, message)


def test_many_sizes_keep_the_candidates_few():
    layouts = mixed_candidate_layouts({4 * TB: 24, 6 * TB: 24, 8 * TB: 24, 10 * TB: 24})
    assert len(layouts) < 200
    names = {str(x) for x in layouts}
    assert "4xraidz2:6@10TB+4xraidz2:6@8TB+4xraidz2:6@6TB+4xraidz2:6@4TB" in names  # one shape on every size


# ---- risk per vdev ---------------------------------------------------------------------------

def test_risk_of_one_size_sized_equals_the_risk_model():
    from zfslab.model.plan import vdev_sized_risk
    from zfslab.model.reliability.params import RiskParams
    from zfslab.model.reliability.risk import markov_risk
    params = RiskParams(8 * TB)
    for text in ("2xraidz2:6@8TB+spare:1@8TB", "raidz1:4@8TB+mirror:2@8TB", "draid2:8d:12c:1s@8TB"):
        sized = parse_layout(text)
        plain = parse_layout(text.replace("@8TB", ""))
        ours = vdev_sized_risk(sized, params, usable_bytes=10 * TB)
        theirs = markov_risk(plain, params, usable_bytes=10 * TB)
        assert ours.p_loss == pytest.approx(theirs.p_loss, rel=1e-12)
        assert ours.p_damage == pytest.approx(theirs.p_damage, rel=1e-12)
        assert ours.mttdl_hours == pytest.approx(theirs.mttdl_hours, rel=1e-12)


def test_each_vdev_risks_its_own_disks():
    from zfslab.model.plan import vdev_sized_risk
    from zfslab.model.reliability.params import RiskParams
    from zfslab.model.reliability.risk import markov_risk
    mixed = vdev_sized_risk(parse_layout("raidz2:8@12TB+raidz2:4@8TB"), RiskParams(12 * TB), usable_bytes=80 * TB)
    big = markov_risk(parse_layout("raidz2:8+raidz2:4"), RiskParams(12 * TB), usable_bytes=80 * TB)
    small = markov_risk(parse_layout("raidz2:8+raidz2:4"), RiskParams(8 * TB), usable_bytes=80 * TB)
    for i in range(len(mixed.p_loss)):
        assert small.p_loss[i] < mixed.p_loss[i] < big.p_loss[i]
        assert small.p_damage[i] < mixed.p_damage[i] < big.p_damage[i]
    # a vdev spanning sizes resilvers as its smallest disk
    span = vdev_sized_risk(parse_layout("raidz2:12@8x12TB/4x8TB"), RiskParams(12 * TB), usable_bytes=80 * TB)
    assert span.p_loss == markov_risk(parse_layout("raidz2:12"), RiskParams(8 * TB), usable_bytes=80 * TB).p_loss


def test_a_layout_zpool_create_refuses_without_f_is_never_on_the_short_list_when_another_fits():
    import json, subprocess, sys, os
    out = subprocess.run([sys.executable, "-m", "zfslab", "plan", "8x12TB,4x8TB", "--json"], capture_output=True,
                         text=True, check=True, env=os.environ | {"PYTHONPATH": os.path.join(os.path.dirname(__file__), "..", "..", "src")})
    data = json.loads(out.stdout)
    forced = {r["layout"] for r in data["layouts"] if r.get("zpool_create_needs_force")}
    assert forced  # spanning sizes needs -f
    assert not forced & set(data["recommendation"]["shortlist"])
    assert all(any("needs -f" in why for why in data["recommendation"]["left_out"][x]) or
               data["recommendation"]["left_out"][x] for x in forced)


def test_risk_of_one_size_sized_equals_the_risk_model_on_field_errors_by_age():
    """The field model's bad records per episode (2) are not its episodes: a sized layout's damage
    comes from each vdev's damaging episodes, by age band, as markov_risk counts them."""
    from zfslab.model.plan import vdev_sized_risk
    from zfslab.model.reliability.params import params_for_class
    from zfslab.model.reliability.risk import markov_risk
    params = params_for_class("hdd", 8 * TB, years=(1.0, 5.0, 10.0))
    for text in ("2xraidz2:6@8TB+spare:1@8TB", "raidz1:4@8TB+mirror:2@8TB", "draid2:8d:12c:1s@8TB", "2xdisk@8TB"):
        ours = vdev_sized_risk(parse_layout(text), params, usable_bytes=10 * TB)
        theirs = markov_risk(parse_layout(text.replace("@8TB", "")), params, usable_bytes=10 * TB)
        assert ours.p_damage == pytest.approx(theirs.p_damage, rel=1e-12)
