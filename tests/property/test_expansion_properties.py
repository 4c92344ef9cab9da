"""Properties of the RAID-Z expansion model (model/expansion.py) for any raidz vdev and disk size."""

from hypothesis import assume, given
from hypothesis import strategies as st

from zfslab.model.capacity import leaf_asize, pool_capacity
from zfslab.model.expansion import expand
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.units import GiB, TB

RECORD = 128 << 10


@st.composite
def cases(draw):
    parity = draw(st.integers(1, 3))
    width = draw(st.integers(parity + 1, 24))
    return (Layout((VdevGroup(VdevKind.RAIDZ, width, parity),)), draw(st.integers(GiB // 4, 30 * TB)),
            draw(st.integers(1, 6)), draw(st.sampled_from([9, 12, 13])), draw(st.floats(0, 1)),
            draw(st.sampled_from(["2.3", "2.3.9", "2.4"])))


@given(cases())
def test_size_grows_by_the_new_disks_asize_in_whole_metaslabs(case):
    layout, vdev_bytes, added, ashift, fill, version = case
    e = expand(layout, vdev_bytes, added, release=version, ashift=ashift, fill=fill)
    leaf, ms = leaf_asize(vdev_bytes), 1 << e.ms_shift
    for before, after in zip(e.steps, e.steps[1:]):
        grown = after.size_bytes - before.size_bytes
        assert grown % ms == 0 and leaf - ms < grown < leaf + ms
        assert after.asize_bytes - before.asize_bytes == leaf


@given(cases())
def test_created_step_is_the_empty_pools_capacity(case):
    layout, vdev_bytes, added, ashift, fill, version = case
    first = expand(layout, vdev_bytes, added, release=version, ashift=ashift, fill=fill).steps[0]
    cap = pool_capacity(layout, vdev_bytes, ashift=ashift, rules="2.4" if version == "2.4" else "2.1")
    assert (first.size_bytes, first.usable_bytes) == (cap.size_bytes, cap.usable_bytes)


@given(cases())
def test_true_space_is_at_least_what_zfs_list_reports(case):
    """New 128K records are charged at the old ratio but take no more raw space than old ones, so
    what fits is at least AVAIL (less one record, as only whole records are counted)."""
    layout, vdev_bytes, added, ashift, fill, version = case
    for s in expand(layout, vdev_bytes, added, release=version, ashift=ashift, fill=fill).steps:
        assert s.true_free_bytes + RECORD > s.avail_bytes
        assert s.old_ratio_loss_bytes >= 0


@given(cases(), st.sampled_from([4 << 10, 16 << 10, 128 << 10, 1 << 20]))
def test_rewrite_never_lowers_true_free_space(case, recordsize):
    layout, vdev_bytes, added, ashift, fill, version = case
    assume(recordsize >= 1 << ashift)
    e = expand(layout, vdev_bytes, added, release=version, ashift=ashift, fill=fill, recordsize=recordsize,
               rewrite=True)
    last, rewritten = e.steps[-2], e.steps[-1]
    assert rewritten.true_free_bytes >= last.true_free_bytes
    assert rewritten.alloc_bytes <= last.alloc_bytes and rewritten.used_bytes <= last.used_bytes
    assert rewritten.true_free_bytes - last.true_free_bytes == last.old_ratio_loss_bytes
    assert (rewritten.size_bytes, rewritten.usable_bytes) == (last.size_bytes, last.usable_bytes)
