"""Properties of the capacity model that must hold for every layout and size."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from zfslab.model.capacity import osizes, pool_capacity
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.plan import mixed_disk_set, plan
from zfslab.model.units import GiB, TB

sizes = st.integers(min_value=GiB, max_value=30 * TB)
ashifts = st.sampled_from([9, 12, 13])
versions = st.sampled_from(["slop64", "0.6.5", "0.7", "0.8", "2.1", "2.4"])


@st.composite
def groups(draw, count=None):
    kind = draw(st.sampled_from(list(VdevKind)))
    n = count or draw(st.integers(1, 6))
    if kind is VdevKind.DISK:
        return VdevGroup(kind, 1, 0, n)
    if kind is VdevKind.MIRROR:
        w = draw(st.integers(2, 4))
        return VdevGroup(kind, w, w - 1, n)
    p = draw(st.integers(1, 3))
    if kind is VdevKind.RAIDZ:
        return VdevGroup(kind, draw(st.integers(p + 1, 30)), p, n)
    d = draw(st.integers(1, 16))
    s = draw(st.integers(0, 3))
    c = draw(st.integers(d + p + s + 1, d + p + s + 40))
    return VdevGroup(kind, c, p, 1, d, s)


@given(g=groups(), vdev=sizes, ashift=ashifts, version=versions)
def test_usable_never_exceeds_raw_times_data_share(g, vdev, ashift, version):
    layout = Layout((g,))
    cap = pool_capacity(layout, vdev, ashift=ashift, rules=version)
    data_share = g.data_disks_per_vdev * g.count / layout.disks
    assert cap.usable_bytes <= vdev * layout.disks * data_share
    assert cap.usable_bytes <= cap.size_bytes


@given(g=groups(), vdev=sizes, ashift=ashifts, version=versions)
def test_adding_a_vdev_never_lowers_capacity(g, vdev, ashift, version):
    assume(g.kind is not VdevKind.DRAID)
    one = Layout((g,))
    more = Layout((VdevGroup(g.kind, g.width, g.parity, g.count + 1),))
    a = pool_capacity(one, vdev, ashift=ashift, rules=version)
    b = pool_capacity(more, vdev, ashift=ashift, rules=version)
    assert b.usable_bytes >= a.usable_bytes and b.size_bytes > a.size_bytes


@given(width=st.integers(5, 30), vdev=sizes, ashift=ashifts)
def test_more_parity_never_gives_more_space(width, vdev, ashift):
    usable = [pool_capacity(Layout((VdevGroup(VdevKind.RAIDZ, width, p),)), vdev, ashift=ashift).usable_bytes
              for p in (1, 2, 3)]
    assert usable[0] >= usable[1] >= usable[2]


@given(g=groups(), vdev=sizes, version=versions)
def test_bigger_disks_never_give_less_space(g, vdev, version):
    layout = Layout((g,))
    small = pool_capacity(layout, vdev, rules=version).usable_bytes
    big = pool_capacity(layout, vdev + vdev // 3, rules=version).usable_bytes
    assert big >= small


@given(g=groups(), spares=st.integers(0, 3))
def test_grammar_round_trips(g, spares):
    layout = Layout((g,), spares)
    assert parse_layout(str(layout)) == layout


# ---- disks of several sizes (docs/capacity.md#mixed-disk-sizes) ------------------------------

def _on(g: VdevGroup, size_bytes: int) -> VdevGroup:
    return VdevGroup(g.kind, g.width, g.parity, g.count, g.draid_data, g.draid_spares, ((g.width, size_bytes),))


@given(big=groups(), small=groups(), small_bytes=sizes, extra=st.integers(1, 20 * TB), version=versions)
def test_grouping_by_size_is_never_worse_than_the_smallest_disk(big, small, small_bytes, extra, version):
    # the same vdev shapes, once each on its own disks and once with every disk counted as the smallest
    big_bytes = small_bytes + extra
    sized = Layout((_on(big, big_bytes), _on(small, small_bytes)))
    plain = Layout((big, small))
    by_size = pool_capacity(sized, osizes(sized, whole_disk=False), rules=version)
    smallest = pool_capacity(plain, small_bytes, rules=version)
    assert by_size.usable_bytes >= smallest.usable_bytes
    assert by_size.size_bytes >= smallest.size_bytes


disk_sizes = st.sampled_from([2 * TB, 4 * TB, 8 * TB, 12 * TB, 20 * TB])


@settings(max_examples=25, deadline=None)
@given(have=st.dictionaries(disk_sizes, st.integers(1, 8), min_size=1, max_size=3), added=disk_sizes)
def test_adding_a_disk_never_lowers_the_best_usable_space(have, added):
    before = max(r.usable_bytes for r in plan(mixed_disk_set([(n, b) for b, n in have.items()])))
    after = max(r.usable_bytes for r in plan(mixed_disk_set([(n, b) for b, n in have.items()] + [(1, added)])))
    assert after >= before
