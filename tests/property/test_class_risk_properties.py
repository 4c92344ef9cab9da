"""Special, dedup and log vdevs in the risk model (docs/reliability.md#allocation-classes): a vdev
whose loss loses the pool can only add risk, and more disks in it only lower that risk."""

from hypothesis import given
from hypothesis import strategies as st

from zfslab.model.layouts import ClassGroup, Layout, VdevGroup, VdevKind
from zfslab.model.reliability.params import RiskParams
from zfslab.model.reliability.risk import markov_risk

TB = 10**12

params_st = st.builds(
    RiskParams,
    disk_bytes=st.integers(TB, 24 * TB),
    afr=st.floats(0.002, 0.2),
    ber_per_bit=st.sampled_from([0.0, 1e-15, 1e-14]),
    replace_hours=st.floats(0, 500),
    resilver_mb_s=st.floats(20, 2000),
    fill=st.floats(0.05, 1.0),
)
data_st = st.one_of(
    st.builds(lambda w, p, n: VdevGroup(VdevKind.RAIDZ, w, p, n), st.integers(5, 14), st.integers(1, 3), st.integers(1, 3)),
    st.builds(lambda w, n: VdevGroup(VdevKind.MIRROR, w, w - 1, n), st.integers(2, 3), st.integers(1, 6)),
)


def mirror(cls: str, width: int, count: int = 1, size: int = 0) -> ClassGroup:
    sizes = ((width, size),) if size else ()
    return ClassGroup(cls, VdevGroup(VdevKind.MIRROR, width, width - 1, count, sizes=sizes))


def risk(layout: Layout, params: RiskParams):
    return markov_risk(layout, params, usable_bytes=TB)


@given(params=params_st, data=data_st, width=st.integers(2, 4), cls=st.sampled_from(["special", "dedup"]),
       size=st.sampled_from([0, 200 * 10**9, 2 * TB]))
def test_adding_a_special_or_dedup_mirror_never_lowers_the_risk(params, data, width, cls, size):
    plain = risk(Layout((data,)), params)
    with_class = risk(Layout((data,), classes=(mirror(cls, width, size=size),)), params)
    for a, b in zip(plain.p_loss, with_class.p_loss):
        assert b >= a
    assert with_class.mttdl_hours <= plain.mttdl_hours


@given(params=params_st, data=data_st, count=st.integers(1, 3))
def test_a_three_way_special_is_safer_than_a_two_way_one(params, data, count):
    two = risk(Layout((data,), classes=(mirror("special", 2, count),)), params)
    three = risk(Layout((data,), classes=(mirror("special", 3, count),)), params)
    for a, b in zip(two.p_loss, three.p_loss):
        assert b <= a
    assert three.p_loss[-1] < two.p_loss[-1] or two.p_loss[-1] == 0


@given(params=params_st, data=data_st)
def test_log_and_cache_vdevs_leave_the_pool_loss_alone(params, data):
    plain = risk(Layout((data,)), params)
    log = ClassGroup("log", VdevGroup(VdevKind.DISK, 1, 0, 1))
    with_log = risk(Layout((data,), classes=(log,), cache_devices=2), params)
    assert with_log.p_loss == plain.p_loss
    assert 0 <= with_log.extra["log"]["p_sync_write_loss"]["5"] <= 1
