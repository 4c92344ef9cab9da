"""model/disk_age.py: a disk's failure rate from its power-on hours (the table of
docs/reliability.md#disk-age), the batch rule, and the batch's raised rates in the Markov chain."""

from __future__ import annotations

import math

import pytest

from zfslab.model.disk_age import (BATCH_FRAILTY_VARIANCE, HDD_AGE_BANDS, HOURS_PER_YEAR, MAX_AGE_HOURS, DiskAge,
                                   afr_of_rate, disk_age, largest_batch, rate_ahead, vdev_rate_ahead)
from zfslab.model.reliability import markov

Y = HOURS_PER_YEAR


def lam(afr):
    return -math.log1p(-afr) / Y


def test_the_table_is_a_bathtub_high_first_months_lowest_in_years_1_to_4_rising_after():
    afrs = [b.afr_per_year for b in HDD_AGE_BANDS]
    assert [b.from_years for b in HDD_AGE_BANDS] == [0, 0.25, 1, 4, 7]
    assert afrs == [0.030, 0.017, 0.014, 0.030, 0.0425]
    assert min(afrs) == afrs[2] and afrs[2] < afrs[3] < afrs[4] and afrs[0] > afrs[1] > afrs[2]
    assert all(b.source for b in HDD_AGE_BANDS)


def test_a_disk_inside_one_band_has_its_rate_and_across_bands_the_time_weighted_mix():
    assert afr_of_rate(rate_ahead(2 * Y, Y)) == pytest.approx(0.014, rel=1e-12)       # 2 y old, 1 y ahead
    assert afr_of_rate(rate_ahead(10 * Y, 5 * Y)) == pytest.approx(0.0425, rel=1e-12)  # past the last band
    # 3 y old over 5 years: 1 y at 1.4 %, 3 y at 3.0 %, 1 y at 4.25 %, by hours
    assert rate_ahead(3 * Y, 5 * Y) == pytest.approx((lam(0.014) + 3 * lam(0.030) + lam(0.0425)) / 5, rel=1e-12)
    # new: 3 months at 3 %, 9 at 1.7 %
    assert rate_ahead(0, Y) == pytest.approx(0.25 * lam(0.030) + 0.75 * lam(0.017), rel=1e-12)


@pytest.mark.parametrize("hours, note", [
    (None, "SMART reports no power-on hours"), (-5, "SMART power-on hours -5 is negative: ignored"),
    (10**9, "SMART power-on hours 1,000,000,000 is more than 30 years, older than SMART itself: ignored"),
    (10**40, "SMART power-on hours 100000000000… (41 digits) is more than 30 years"),
    (True, "SMART power-on hours 'True' is not a whole number: ignored"),
    ("28712", "SMART power-on hours '28712' is not a whole number: ignored"),
    (3.5, "SMART power-on hours '3.5' is not a whole number: ignored"),
])
def test_hours_that_cannot_be_an_age_are_ignored_with_a_note(hours, note):
    age = disk_age("sdb", hours)
    assert age.hours is None and age.note.startswith(note)


def test_hours_in_range_are_the_age():
    assert disk_age("sdb", 0).age_years == 0 and disk_age("sdb", MAX_AGE_HOURS).hours == MAX_AGE_HOURS
    assert disk_age("sdb", 35_040, "M").age_years == 4.0 and not disk_age("sdb", 35_040).note


def test_a_batch_is_one_model_within_a_month_of_running():
    same = tuple(DiskAge(f"d{i}", 30_000 + 100 * i, "HDD 8TB") for i in range(4))
    assert len(largest_batch(same)) == 4
    # one bought later, or of another model, or of unknown age: not of the batch
    mixed = same[:2] + (DiskAge("late", 31_000, "HDD 8TB"), DiskAge("other", 30_050, "HDD 12TB"),
                        DiskAge("unknown", None, "HDD 8TB"))
    assert [d.name for d in largest_batch(mixed)] == ["d0", "d1"]
    assert largest_batch((DiskAge("a", 100, "M"), DiskAge("b", 5_000, "M"))) == ()
    assert largest_batch((DiskAge("a", 100, ""), DiskAge("b", 100, ""))) == ()   # no model: no batch


def test_the_frailty_variance_gives_schroeder_and_gibsons_squared_coefficient_of_variation():
    # a gamma frailty of variance v makes the time between failures Lomax: C^2 = 1 / (1 - 2 v)
    assert 1 / (1 - 2 * BATCH_FRAILTY_VARIANCE) == pytest.approx(2.4)


def test_a_batch_raises_the_chain_by_the_frailtys_moments_to_leading_order():
    lam_h, mu = lam(0.03), 1 / 60
    v = BATCH_FRAILTY_VARIANCE
    for n, p in ((2, 1), (6, 2), (8, 3)):
        plain = markov.loss_probabilities(markov.birth_death(n, p, lam_h, mu), [Y])[0]
        batch = markov.loss_probabilities(markov.birth_death(n, p, lam_h, mu, frailty_variance=v), [Y])[0]
        # E[Z^(p+1)] of a mean-1 gamma frailty: prod_{k<=p} (1 + k v), what the chain's raised rates give
        assert batch / plain == pytest.approx(math.prod(1 + k * v for k in range(1, p + 1)), rel=0.01)
    with pytest.raises(ValueError):
        markov.birth_death(2, 1, lam_h, mu, frailty_variance=-1)


def test_a_vdevs_rate_is_the_plain_mean_for_one_failure_and_the_power_mean_for_more():
    disks = [(2 * Y, 0.0), (9 * Y, 0.0), (None, lam(0.015))]   # 1.4 %, 4.25 %, and one at the class rate
    rates = [lam(0.014), lam(0.0425), lam(0.015)]
    assert vdev_rate_ahead(disks, Y, 1) == pytest.approx(sum(rates) / 3, rel=1e-12)
    pairs = (rates[0] * rates[1] + rates[0] * rates[2] + rates[1] * rates[2]) / 3
    assert vdev_rate_ahead(disks, Y, 2) == pytest.approx(math.sqrt(pairs), rel=1e-12)
    assert vdev_rate_ahead(disks, Y, 1) == pytest.approx(
        (rate_ahead(2 * Y, Y) + rate_ahead(9 * Y, Y) + lam(0.015)) / 3, rel=1e-12)
    # across an edge: 3.5 y old, 1 y ahead, cubed over time (0.5 y at 1.4 %, 0.5 y at 3.0 %)
    assert vdev_rate_ahead([(3.5 * Y, 0.0)] * 3, Y, 3) == pytest.approx(
        ((lam(0.014) ** 3 + lam(0.030) ** 3) / 2) ** (1 / 3), rel=1e-12)
    assert vdev_rate_ahead([(3.5 * Y, 0.0)] * 3, Y, 3) > rate_ahead(3.5 * Y, Y)   # Jensen: above the plain mean
