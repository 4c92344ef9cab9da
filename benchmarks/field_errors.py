"""The field error model checked against the field (docs/reliability.md#checked-against-the-field):
what the scrubs of a typical pool find in a year on the field model and on the datasheet's BER,
beside what the studies counted, and the chance that one resilver meets a latent error.

    python3 benchmarks/field_errors.py [DISKS DISK_TB FILL SCRUB_DAYS]   (default 10 8 0.5 30)
"""

import sys

sys.path[:0] = ["src"]

from zfslab.model.reliability.field_errors import ENTERPRISE, FLASH, NEARLINE, RECORDS_PER_EPISODE, scrub_check  # noqa: E402
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
      f"field {100 * field_hit:.3f} %, datasheet {100 * (1 - __import__('math').exp(-one)):.1f} %; "
      f"records per field episode {RECORDS_PER_EPISODE:g}")
