"""The field error model checked against the field (docs/reliability.md#checked-against-the-field):
what the scrubs of a typical pool find in a year on the field model and on the datasheet's BER,
beside what the studies counted, by the disks' age, and the chance that one resilver meets a latent error.

    python3 benchmarks/field_errors.py [DISKS DISK_TB FILL SCRUB_DAYS]   (default 10 8 0.5 30)
"""

import math
import sys

sys.path[:0] = ["src"]

from zfslab.model.reliability.field_errors import (  # noqa: E402
    ENTERPRISE, FLASH, NEARLINE, NEARLINE_BY_AGE, NEARLINE_FIRST_YEAR, RECORDS_PER_EPISODE, scrub_check,
)
from zfslab.model.units import TB  # noqa: E402

disks, tb, fill, days = (int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])) \
    if len(sys.argv) == 5 else (10, 8.0, 0.5, 30.0)
c = scrub_check(disks, int(tb * TB), fill=fill, scrub_days=days)
print(f"pool: {disks} x {tb:g} TB nearline disks, {100 * fill:g} % full, a scrub every {days:g} days "
      f"({c.scrubs_per_year:.1f} a year)")
print()
print("the studies' counts and the rates taken from them")
for s in (NEARLINE, ENTERPRISE, FLASH):
    print(f"  {s.name:15} {100 * s.drives_affected:4.1f} % of drives in {s.months:g} months -> first LSE "
          f"{100 * s.incidence_per_year:.2f} %/drive-year, episodes {s.episodes_per_year:.4f}/drive-year")
print()
print(f"{'':34}{'field':>14}{'datasheet 1e-14':>18}")
print(f"{'errors found per scrub':34}{c.field_episodes_per_year / c.scrubs_per_year:>14.3f}"
      f"{c.datasheet_errors_per_scrub:>18.2f}")
print(f"{'errors found per year':34}{c.field_episodes_per_year:>14.3f}{c.datasheet_errors_per_year:>18.1f}")
print(f"{'records repaired per year':34}{c.field_records_per_year:>14.3f}{c.datasheet_errors_per_year:>18.1f}")
print(f"{'P(a scrub repairs anything)':34}{100 * c.field_p_scrub_repairs:>13.1f}%"
      f"{100 * c.datasheet_p_scrub_repairs:>17.1f}%")
print(f"{'scrubs with 0 errors':34}{100 * (1 - c.field_p_scrub_repairs):>13.1f}%"
      f"{100 * (1 - c.datasheet_p_scrub_repairs):>17.1f}%")
study = disks * NEARLINE.incidence_per_year * fill
print(f"study (Bairavasundaram 2007): {disks} nearline drives develop {disks * NEARLINE.incidence_per_year:.2f} "
      f"first LSEs a year, {study:.2f} on the allocated {100 * fill:g} %")
print()
one = tb * TB * fill * 8 * 1e-14
field_hit = NEARLINE.episodes_per_year / 8760 * days * 24 / 2 * fill
print(f"one critical resilver of a 2-way mirror ({tb:g} TB, {100 * fill:g} % full): P(meets a latent error) "
      f"field {100 * field_hit:.3f} %, datasheet {100 * (1 - math.exp(-one)):.1f} %; "
      f"records per field episode {RECORDS_PER_EPISODE:g}")
print()
print("by age (nearline; docs/reliability.md#by-age): scrub findings a year")
print(f"{'age':>9}{'episodes/disk-y':>16}{'found/y':>9}{'P(repair)':>10}  the study (first LSEs/y)")
later = -math.expm1(math.log1p(-NEARLINE.drives_affected) * 12 / 20 - math.log1p(-NEARLINE_FIRST_YEAR) * 12 / 20)
for label, age, study_rate in (("0-1 y", 0.5, NEARLINE_FIRST_YEAR), ("2-3 y", 2.5, later), ("4-5 y", 4.5, None)):
    a = scrub_check(disks, int(tb * TB), fill=fill, scrub_days=days, age_years=age)
    said = f"{disks * study_rate * fill:.2f} ({100 * study_rate:.2f} %/disk)" if study_rate else "not counted"
    print(f"{label:>9}{NEARLINE_BY_AGE.episodes_at(age):>16.4f}{a.field_episodes_per_year:>9.3f}"
          f"{100 * a.field_p_scrub_repairs:>9.1f}%  {said}")
print("the study: 3.15 % in the first 12 months, the rest of 8.5 % in 32 months over")
print("months 13-32; no count past 32 months, where the model holds the last rate")
