"""The raw cost of a written record, parity and padding included, against the real OpenZFS code.

The speed model's data share of a raidz/dRAID vdev (performance._data_share) and the plan's
allocation table rest on capacity.psize_to_asize; here libzpool writes 64 MiB of incompressible
128 KiB records and zpool's ALLOCATED grows by what that function says, less than 1 % of
metadata (indirect blocks, dnodes, their ditto copies) aside.
"""

import pytest

from zfslab.model.allocation import block_space_fraction
from zfslab.model.capacity import psize_to_asize
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.units import GB

pytestmark = pytest.mark.oracle

MIB = 64
RECORD = 128 * 1024


@pytest.mark.parametrize("layout,ashift", [
    ("disk", 12), ("mirror:2", 12), ("raidz1:3", 9), ("raidz1:5", 12), ("raidz2:6", 12), ("raidz2:10", 12),
    ("raidz3:7", 12), ("raidz3:24", 9), ("2xraidz2:5", 12), ("draid2:4d:8c:1s", 12),
])
def test_written_records_allocate_what_the_model_says(zspace, layout, ashift):
    lay = parse_layout(layout)
    empty = zspace(lay, 4 * GB, ashift).alloc_bytes
    written = zspace(lay, 4 * GB, ashift, write_mib=MIB).alloc_bytes
    # a mirror's ALLOCATED counts one copy, as its SIZE counts one disk
    expected = (MIB << 20) // RECORD * psize_to_asize(lay.groups[0], RECORD, ashift)
    grown = written - empty
    assert expected <= grown <= expected * 1.01, (layout, ashift, grown, expected, grown / expected)


@pytest.mark.parametrize("layout,ashift,block", [
    ("mirror:2", 12, 16384), ("raidz1:5", 12, 16384), ("raidz2:4", 12, 16384), ("raidz2:4", 9, 8192),
    ("raidz3:9", 12, 8192), ("raidz2:6", 12, 16384), ("draid2:4d:8c:1s", 12, 16384),
])
def test_small_blocks_get_the_share_of_usable_space_the_model_says(zspace, layout, ashift, block):
    """An object of `block`-byte blocks (a zvol of that volblocksize): ALLOCATED grows by asize per
    block and USED by its dsize, so the data written over the USED it costs is block_space_fraction
    (docs/capacity.md#space-at-a-block-size), less what the object's indirect blocks add (< 1 %)."""
    lay = parse_layout(layout)
    empty = zspace(lay, 4 * GB, ashift)
    written = zspace(lay, 4 * GB, ashift, write_mib=MIB, record_bytes=block)
    blocks = (MIB << 20) // block
    asize = psize_to_asize(lay.groups[0], block, ashift)
    grown = written.alloc_bytes - empty.alloc_bytes
    assert blocks * asize <= grown <= blocks * asize * 1.01, (layout, ashift, block, grown, blocks * asize)
    fraction = block_space_fraction(lay.groups[0], block, ashift)
    charged = written.used_bytes - empty.used_bytes
    assert (MIB << 20) / fraction <= charged <= (MIB << 20) / fraction * 1.01, (layout, charged, float(fraction))
