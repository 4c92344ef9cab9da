"""How much the emptiness sample misses (docs/safety.md#how-much-the-sample-sees): the chance that
an island of data at a random place touches no sampled region, from the exact region sets, for
the sample before issue 26 (64 x 1 MiB), the sample now, and the sample cut to its first 1,024
regions (what an HDD reads in its first seconds). With device paths, also times the sample on
each (read only, O_DIRECT, exclusive):

    PYTHONPATH=src python3 benchmarks/sample_miss.py
    python3 tests/e2e/guest/guest.py 2.4 'PYTHONPATH=/mnt/repo/src python3 /mnt/repo/benchmarks/sample_miss.py /dev/sdb'
"""

import sys

from zfslab.system.disks import SAMPLE_REGION_BYTES, read_samples, sample_offsets, sample_plan

MIB, GIB = 1 << 20, 1 << 30


def miss(size: int, offsets: list[int], region: int, island: int) -> float:
    """P(an island of `island` bytes starting uniformly in [0, size - island] touches no region)."""
    edges = [0] + [x for o in sorted(offsets) for x in (o, o + region)] + [size]
    gaps = [edges[i + 1] - edges[i] for i in range(0, len(edges), 2)]  # the unread stretches
    return sum(max(0, g - island) for g in gaps) / (size - island)  # fits inside a gap: missed


def old_offsets(size: int) -> list[int]:
    last = size // 4096 * 4096 - MIB
    return [(last * i // 63) // 4096 * 4096 for i in range(64)]


def first_regions(size: int, count: int) -> list[int]:
    out: list[int] = []
    for sweep in sample_plan(size).passes():
        if len(out) >= count:
            break
        out += sweep
    return out


def main() -> None:
    print("disk       island    64x1MiB  4096x64KiB  first-1024")
    for size, name in ((GIB, "1 GiB"), (2 * GIB, "2 GiB"), (4 * 10**12, "4 TB"), (20 * 10**12, "20 TB")):
        for island in (MIB, 16 * MIB, 128 * MIB, GIB):
            if island >= size:
                continue
            print(f"{name:<10} {island // MIB:>5} MiB  {miss(size, old_offsets(size), MIB, island):7.3f}  "
                  f"{miss(size, sample_offsets(size), SAMPLE_REGION_BYTES, island):10.3f}  "
                  f"{miss(size, first_regions(size, 1024), SAMPLE_REGION_BYTES, island):10.3f}")
    for device in sys.argv[1:]:
        s = read_samples(device)
        print(f"{device}: read {s.sampled} of {s.planned} regions of {SAMPLE_REGION_BYTES >> 10} KiB in "
              f"{s.seconds:.2f} s ({s.sampled / max(s.seconds, 1e-9):,.0f} regions/s), {s.dirty} not zero")


if __name__ == "__main__":
    main()
