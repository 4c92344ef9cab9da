"""How much the emptiness sample misses (docs/safety.md#how-much-the-sample-sees): the chance that
an island of data at a random place touches no sampled region, from the exact region sets, for
the sample before issue 26 (64 x 1 MiB), the first try at issue 26 (4,096 x 64 KiB, reverted
for its cost), the sample now (4 KiB pages, one a MiB up to 16,384), and the sample now cut to
its first 640 regions (what an HDD reads in the 4 s budget). With device paths, also times the
sample and the wipe's zeroing on each (the read is read-only, O_DIRECT, exclusive; --wipe also
zeroes the sampled pages, which destroys data there):

    PYTHONPATH=src python3 benchmarks/sample_miss.py
    python3 tests/e2e/guest/guest.py 2.4 \
        'PYTHONPATH=/mnt/repo/src python3 /mnt/repo/benchmarks/sample_miss.py --wipe /dev/sdb'
"""

import sys
import time

from zfslab.system.disks import SAMPLE_REGION_BYTES, read_samples, sample_offsets, sample_plan, zero_samples

MIB, GIB = 1 << 20, 1 << 30


def miss(size: int, offsets: list[int], region: int, island: int) -> float:
    """P(an island of `island` bytes starting uniformly in [0, size - island] touches no region)."""
    edges = [0] + [x for o in sorted(offsets) for x in (o, o + region)] + [size]
    gaps = [edges[i + 1] - edges[i] for i in range(0, len(edges), 2)]  # the unread stretches
    return sum(max(0, g - island) for g in gaps) / (size - island)  # fits inside a gap: missed


def even_offsets(size: int, count: int, region: int) -> list[int]:
    last = size // 4096 * 4096 - region
    return [(last * i // (count - 1)) // 4096 * 4096 for i in range(count)]


def first_regions(size: int, count: int) -> list[int]:
    out: list[int] = []
    for sweep in sample_plan(size).passes():
        if len(out) >= count:
            break
        out += sweep
    return out[:count]  # a budget cuts the read mid-sweep


def main() -> None:
    if len(sys.argv) > 1:  # devices: time them only (the table costs a minute under TCG)
        return time_devices([a for a in sys.argv[1:] if a != "--wipe"], wipe="--wipe" in sys.argv)
    print("disk       island    64x1MiB  4096x64KiB  now(4KiB)  regions  first-640")
    for size, name in ((GIB, "1 GiB"), (2 * GIB, "2 GiB"), (4 * 10**12, "4 TB"), (20 * 10**12, "20 TB")):
        now = sample_offsets(size)
        for island in (MIB, 16 * MIB, 128 * MIB, GIB):
            if island >= size:
                continue
            print(f"{name:<10} {island // MIB:>5} MiB  {miss(size, even_offsets(size, 64, MIB), MIB, island):7.3f}  "
                  f"{miss(size, even_offsets(size, 4096, 64 << 10), 64 << 10, island):10.3f}  "
                  f"{miss(size, now, SAMPLE_REGION_BYTES, island):9.3f}  {len(now):7,}  "
                  f"{miss(size, first_regions(size, 640), SAMPLE_REGION_BYTES, island):9.3f}")


def time_devices(devices: list[str], *, wipe: bool) -> None:
    for device in devices:
        if wipe:
            t0 = time.monotonic()
            zero_samples(device)
            print(f"{device}: zeroed {len(sample_offsets(_size(device))):,} pages in {time.monotonic() - t0:.3f} s")
        s = read_samples(device)
        print(f"{device}: read {s.sampled} of {s.planned} regions of {SAMPLE_REGION_BYTES >> 10} KiB in "
              f"{s.seconds:.3f} s ({s.sampled / max(s.seconds, 1e-9):,.0f} regions/s), {s.dirty} not zero")


def _size(device: str) -> int:
    with open(device, "rb") as f:
        return f.seek(0, 2)


if __name__ == "__main__":
    main()
