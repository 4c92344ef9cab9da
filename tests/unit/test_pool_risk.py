"""model/pool_risk.py: the pool's risk of loss as it stands, on pools real ZFS built in the guest
(tests/data/pools/): a degraded mirror starts one failure in, a healthy raidz2 from its healthy
state, and the figures agree with the plan's risk engine where both apply."""

from __future__ import annotations

import dataclasses

import pytest

from test_pool_model import version
from test_pool_read import read_both
from zfslab.model.pool_model import check_model, pool_layout
from zfslab.model.pool_risk import risk_now
from zfslab.model.pool_state import DiskHealth
from zfslab.model.reliability.params import params_for_class
from zfslab.model.reliability.risk import markov_risk


def _risk(state, health=None, disks=None):
    check = check_model(state, version("zfs-2.4"))
    return risk_now(state, check.vdev_bytes, disks or {}, health or {}), check


def test_a_degraded_mirror_starts_one_failure_in_and_its_repair_is_the_plans_figure():
    state = read_both("zfs-2.4", "degraded")[0]   # mirror:2, one side offline, 256 MiB written
    risk, check = _risk(state)
    assert risk.disks_out == 1 and risk.disk_class == "hdd"
    # the year ahead weighs most the days until the offline side is back: 34x on these 2 GB disks
    assert risk.p_loss[0] > 10 * risk.p_loss_repaired[0] and risk.p_loss[1] > risk.p_loss_repaired[1]
    # once repaired, the pool is the plan's: markov_risk of its layout with the same inputs
    fill = state.alloc_bytes / state.size_bytes
    params = params_for_class("hdd", check.vdev_bytes, years=risk.years, fill=fill)
    plan = markov_risk(pool_layout(state), params, usable_bytes=state.usable_bytes)
    assert risk.p_loss_repaired == pytest.approx(plan.p_loss, rel=1e-9)
    # with one side out, losing the other within a year is at least its failure rate over the repair
    assert risk.p_loss[0] > params.failure_rate_per_hour * 24


def test_a_disk_smart_flags_is_the_exposure_if_it_fails_now():
    state = read_both("zfs-2.4", "healthy")[0]   # raidz2:6 and a spare
    leaf = state.vdevs[0].leaves[0].name
    failing = {leaf: DiskHealth(leaf, passed=False, pending=8)}
    risk, _ = _risk(state, failing)
    plain, _ = _risk(state)
    assert risk.disks_flagged == 1 and risk.p_loss == plain.p_loss and not plain.p_loss_flagged_out
    assert all(out > 2 * now for out, now in zip(risk.p_loss_flagged_out, risk.p_loss))


def test_a_vdev_with_more_out_than_it_survives_is_lost_and_no_figures_without_a_model():
    state = read_both("zfs-2.4", "degraded")[0]
    mirror = state.vdevs[0]
    both_out = dataclasses.replace(mirror, children=tuple(dataclasses.replace(c, state="FAULTED")
                                                          for c in mirror.children))
    risk, _ = _risk(dataclasses.replace(state, vdevs=(both_out,) + state.vdevs[1:]))
    assert risk.p_loss == (1.0, 1.0)
    assert risk_now(state, None, {}, {}).reason   # no disk size: no figure, and why

