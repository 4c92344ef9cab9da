"""footprint's invariants: no block is allocated below its compressed size, raidz pricing is
the capacity model's own, and the sampler's interval covers the full-read answer."""

import os
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from zfslab.model.allocation import block_allocation
from zfslab.model.capacity import psize_to_asize
from zfslab.model.footprint import (Compression, DataBlocks, block_cost, block_psize, clen_key, data_footprint,
                                    footprint, merge, pool_alloc, ratio_estimate, used_coster)
from zfslab.model.layout_grammar import parse_layout
from zfslab.system.footprint_reader import compressor, read_sample, size_blocks, walk

LAYOUTS = ["raidz1:3", "raidz2:6", "raidz3:11", "mirror:2", "mirror:3", "draid2:8d:12c:0s", "draid1:4d:6c:1s",
           "2xraidz2:6", "raidz1:5+raidz2:8"]
lsizes = st.one_of(st.integers(1, 256).map(lambda n: n * 512), st.sampled_from([1 << s for s in range(12, 25)]))


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(LAYOUTS), lsizes, st.integers(0, 1 << 24), st.integers(9, 13), st.booleans(), st.booleans())
def test_a_block_never_takes_less_than_its_compressed_size(text, lsize, raw_clen, ashift, on, floor):
    layout = parse_layout(text)
    clen = clen_key(lsize, None if raw_clen == 0 else min(raw_clen, lsize + 100))
    comp = Compression(on, floor_to_alloc=floor)
    kind, psize = block_psize(lsize, clen, comp, pool_alloc(layout, ashift))
    if kind == "compressed":
        assert clen <= psize < lsize
    elif kind == "stored":
        assert psize == lsize
    for g in layout.groups:
        if psize:
            c = block_cost(g, psize, ashift)
            assert c.asize_bytes >= c.data_bytes >= psize and c.raw_bytes >= c.asize_bytes
            assert c.data_bytes + c.parity_bytes + c.padding_bytes == c.raw_bytes


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(LAYOUTS), st.integers(1, 1 << 24), st.integers(9, 13))
def test_raidz_pricing_is_the_capacity_models_deflate_accounting(text, psize, ashift):
    for g in parse_layout(text).groups:
        c = block_cost(g, psize, ashift)
        b = block_allocation(g, psize, ashift)
        assert c.asize_bytes == psize_to_asize(g, psize, ashift) == b.asize_bytes
        assert c.used_bytes == b.dsize_bytes
        if psize == 128 * 1024 and g.kind.name == "RAIDZ":
            # the deflate ratio is taken from a 128K block: that block is charged its own size, to 512 B
            assert abs(c.used_bytes - psize) < 512 * (c.asize_bytes >> 9) / 512 + 512


def _records(rng: random.Random, n: int):
    """The records of n files of heavy-tailed sizes and mixed compressibility: (lsize, clen)."""
    records = []
    for _ in range(n):
        size = int(rng.lognormvariate(10, 2)) + 1
        ratio = rng.choice([1.0, 1.0, 1.6, 3.0, 8.0])
        for (lsize, _), k in size_blocks(size, 128 * 1024).items():
            records += [(lsize, clen_key(lsize, int(lsize / ratio * rng.uniform(0.8, 1.2)) + 4)) for _ in range(k)]
    return records


def test_the_ratio_interval_covers_the_full_answer_at_its_stated_level():
    rng = random.Random(7)
    records = _records(rng, 800)
    layout = parse_layout("raidz2:6")
    cost = used_coster(layout, 12, Compression(True))
    off = used_coster(layout, 12, Compression(False))
    y = [cost(k) for k in records]
    x = [off((k[0], k[0])) for k in records]
    truth, total_x = sum(y), sum(x)
    trials, covered = 400, 0
    for _ in range(trials):
        idx = rng.sample(range(len(records)), 150)
        e = ratio_estimate([y[i] for i in idx], [x[i] for i in idx], total_x, len(records))
        covered += e.low <= truth <= e.high
    assert 0.90 <= covered / trials   # stated 95 %; 400 trials put the count within about 2 % of it
def test_a_full_read_is_exact_and_the_interval_collapses():
    e = ratio_estimate([3.0, 4.0], [5.0, 6.0], 11.0, 2)
    assert e.exact and e.value == e.low == e.high == 7.0


def test_the_samplers_interval_covers_the_full_read_on_a_real_tree(tmp_path):
    rng = random.Random(3)
    words = [bytes(rng.choice(b"abcdefgh") for _ in range(rng.randint(2, 9))) for _ in range(300)]
    for i in range(120):
        kind = i % 3
        size = rng.choice([300, 3000, 20_000, 200_000])
        if kind == 0:
            data = rng.randbytes(size)
        elif kind == 1:
            data = b" ".join(rng.choice(words) for _ in range(size // 5))[:size]
        else:
            data = bytes(size // 2) + rng.randbytes(size - size // 2)
        (tmp_path / f"f{i}").write_bytes(data)
    w = walk([str(tmp_path)])
    lz4 = compressor("lz4")
    layout = parse_layout("raidz2:6")
    comp = Compression(True)
    full = read_sample(w, 128 * 1024, lz4, max_bytes=None, max_seconds=None, rng=random.Random(0))
    blocks: dict = {}
    for _, b in full.read:
        merge(blocks, b)
    truth = footprint(blocks, layout, 12, comp).used_bytes
    cost, off = used_coster(layout, 12, comp), used_coster(layout, 12, Compression(False))
    total_x = sum(off(k) * n for f in w.files for k, n in size_blocks(f[3], 128 * 1024).items())
    all_as_is: dict = {}
    for f in w.files:
        merge(all_as_is, size_blocks(f[3], 128 * 1024))
    covered = 0
    for seed in range(20):
        s = read_sample(w, 128 * 1024, lz4, max_bytes=1_000_000, max_seconds=None, rng=random.Random(seed))
        assert not s.complete and s.records
        e = ratio_estimate([cost(k) for k in s.records], [off((k[0], k[0])) for k in s.records], total_x,
                           s.population_records)
        read, as_is = {}, {}
        for k in s.records:
            merge(read, {k: 1})
            merge(as_is, {(k[0], k[0]): 1})
        scaled = data_footprint(DataBlocks(read, as_is, all_as_is, "lz4", 128 * 1024, len(w.files), 1, 0, False),
                                layout, 12, comp)
        assert abs(scaled.used_bytes - e.value) <= 1e-6 * e.value   # the table and the interval agree
        covered += e.low <= truth <= e.high
    assert covered >= 17
