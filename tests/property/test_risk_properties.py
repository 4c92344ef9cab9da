"""Properties every risk answer must have, over many layouts and inputs."""

import math

from hypothesis import assume, given
from hypothesis import strategies as st

from zfslab.model.layouts import Layout, VdevGroup, VdevKind
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


def p5(layout, params):
    return markov_risk(layout, params, usable_bytes=TB)


# The Markov solve's relative error: a stiff chain (a replacement of 1e-16 h against a year's
# failures) leaves ~1e-9 of float noise in P(loss), which a 1e-9 band flagged as a spare that
# raised the risk (CI, 2026-11-26); a real monotonicity fault is many orders larger
SOLVE_REL = 1e-6

@given(params=params_st, width=st.integers(5, 20), count=st.integers(1, 4))
def test_more_parity_never_raises_the_risk(params, width, count):
    risks = [p5(Layout((VdevGroup(VdevKind.RAIDZ, width, p, count),)), params) for p in (1, 2, 3)]
    for a, b in zip(risks, risks[1:]):
        assert b.p_loss[1] <= a.p_loss[1] * (1 + SOLVE_REL)
        assert b.mttdl_hours >= a.mttdl_hours * (1 - SOLVE_REL)


@given(params=params_st, width=st.integers(3, 20), parity=st.integers(1, 3))
def test_a_wider_raidz_never_lowers_the_risk(params, width, parity):
    assume(width > parity)
    narrow = p5(Layout((VdevGroup(VdevKind.RAIDZ, width, parity),)), params)
    wide = p5(Layout((VdevGroup(VdevKind.RAIDZ, width + 1, parity),)), params)
    assert wide.p_loss[1] >= narrow.p_loss[1] * (1 - SOLVE_REL)


@given(params=params_st, width=st.integers(3, 16), parity=st.integers(1, 3), spares=st.integers(1, 2))
def test_a_hot_spare_never_raises_the_risk(params, width, parity, spares):
    assume(width > parity)
    group = VdevGroup(VdevKind.RAIDZ, width, parity)
    plain = p5(Layout((group,)), params)
    spared = p5(Layout((group,), spares), params)
    assert spared.p_loss[1] <= plain.p_loss[1] * (1 + SOLVE_REL)


@given(params=params_st, ways=st.integers(2, 4), count=st.integers(1, 12))
def test_p_loss_rises_with_the_years(params, ways, count):
    r = p5(Layout((VdevGroup(VdevKind.MIRROR, ways, ways - 1, count),)), params.with_(years=(0.5, 1, 2, 5, 10, 20)))
    assert all(a <= b for a, b in zip(r.p_loss, r.p_loss[1:]))
    assert all(0 <= x <= 1 for x in r.p_loss + r.p_damage)


@given(params=params_st, data=st.sampled_from([4, 8]), parity=st.integers(1, 3), spares=st.integers(0, 2))
def test_distributed_spares_never_raise_the_risk(params, data, parity, spares):
    children = 24
    base = p5(Layout((VdevGroup(VdevKind.DRAID, children, parity, 1, data, 0),)), params)
    more = p5(Layout((VdevGroup(VdevKind.DRAID, children, parity, 1, data, spares),)), params)
    assert more.p_loss[1] <= base.p_loss[1] * (1 + 1e-6)


# the field error model (docs/reliability.md#field-error-model)
field_st = st.builds(
    RiskParams,
    disk_bytes=st.integers(TB, 24 * TB),
    afr=st.floats(0.002, 0.2),
    replace_hours=st.floats(0, 500),
    resilver_mb_s=st.floats(20, 2000),
    fill=st.floats(0.05, 1.0),
    error_model=st.just("field"),
    lse_episodes_per_year=st.floats(0.001, 1.0),
    scrub_days=st.floats(1, 365),
)
layout_st = st.builds(lambda kind, width, parity, count: Layout((VdevGroup(
    kind, width if kind is VdevKind.RAIDZ else parity + 1, parity, count),)),
    st.sampled_from([VdevKind.RAIDZ, VdevKind.MIRROR]), st.integers(5, 16), st.integers(1, 3), st.integers(1, 4))


@given(params=field_st, layout=layout_st, factor=st.floats(1.1, 10))
def test_more_latent_errors_or_rarer_scrubs_never_lower_the_damage(params, layout, factor):
    base = p5(layout, params)
    more = p5(layout, params.with_(lse_episodes_per_year=min(params.lse_episodes_per_year * factor, 365)))
    rarer = p5(layout, params.with_(scrub_days=params.scrub_days * factor))
    assert more.p_damage[1] >= base.p_damage[1] and rarer.p_damage[1] >= base.p_damage[1]
    assert more.p_loss == base.p_loss == rarer.p_loss  # read errors damage blocks; the chain alone loses pools


@given(params=field_st, layout=layout_st)
def test_field_damage_is_bounded_by_the_critical_episodes(params, layout):
    # each damaging episode needs a resilver with no redundancy left: never more likely than one
    r = p5(layout, params)
    assert 0 <= r.p_damage[1] <= 1
    episodes = sum(v.critical_episodes_per_hour * v.count for v in r.vdevs) * 5 * 8760
    assert r.p_damage[1] <= -math.expm1(-episodes) * (1 + 1e-9)
