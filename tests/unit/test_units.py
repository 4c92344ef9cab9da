import pytest

from zfslab.errors import SizeError, UsageError
from zfslab.commands._common import parse_number
from zfslab.model.units import TB, TiB, format_tb, format_tib, parse_blocksize, parse_size, zfs_nicenum


@pytest.mark.parametrize("text,expected", [
    ("4TB", 4 * TB), ("4 TB", 4 * TB), ("3.64TiB", int(3.64 * TiB)), ("4000787030016", 4000787030016),
    ("12tb", 12 * TB), ("512MiB", 512 << 20), ("1.5GB", 1_500_000_000), ("1000B", 1000),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text,fragment", [
    ("4T", "'T' is ambiguous: write 4TB (10^n) or 4TiB (2^n)"),
    ("four", "write a number with a unit"),
    ("4XB", "units are B, KB"),
    ("0TB", "more than 0 bytes"),
    ("-1TB", "write a number with a unit"),
])
def test_parse_size_errors_name_the_value_and_the_fix(text, fragment):
    with pytest.raises(SizeError) as e:
        parse_size(text)
    assert str(e.value).startswith(f"bad size {text!r}: ")
    assert fragment in str(e.value)


@pytest.mark.parametrize("text,expected", [("128K", 131072), ("1M", 1 << 20), ("16384", 16384), ("4k", 4096), ("16M", 16 << 20)])
def test_parse_blocksize(text, expected):
    assert parse_blocksize(text) == expected


@pytest.mark.parametrize("text", ["100K", "32M", "256", "abc"])
def test_parse_blocksize_rejects(text):
    with pytest.raises(SizeError, match="power of two"):
        parse_blocksize(text)


@pytest.mark.parametrize("num,text", [
    # values and their zfs list rendering (zfs_nicenum_format: docs/capacity.md#printing-sizes)
    (3861712470016, "3.51T"), (31811480584192, "28.9T"), (95176475279360, "86.6T"),
    (87 * TiB, "87T"), (24000277250048, "21.8T"), (1024, "1K"), (1000, "1000"), (10239, "10.0K"),
    (832 << 20, "832M"), (5905580032, "5.50G"),
])
def test_zfs_nicenum_prints_like_zfs_list(num, text):
    assert zfs_nicenum(num) == text


def test_vendor_and_binary_formats():
    assert format_tb(4000787030016) == "4.00 TB"
    assert format_tib(4000787030016) == "3.64 TiB"


# --- hostile input (issue 19) -------------------------------------------------------------

@pytest.mark.parametrize("text", ["²TB", "٤TB", "4_000TB", "1" * 5000 + "TB", "nanTB",
                                  "infTB", "1e3TB", "4TB\x00"])
def test_sizes_are_ascii_decimals(text):
    with pytest.raises(SizeError):
        parse_size(text)


def test_sizes_stop_at_64_bits():
    assert parse_size("18446744073709551615") == 2**64 - 1
    with pytest.raises(SizeError, match="at most 2\\^64 - 1 bytes"):
        parse_size("1000000PB")


@pytest.mark.parametrize("text", ["²", "1" * 5000, "1_000", "١٢"])
def test_block_sizes_are_ascii_and_short(text):
    with pytest.raises(SizeError):
        parse_blocksize(text)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e400", "1e308", "²", "١", "1_0", "", " ", "0x10", "1,5"])
def test_parse_number_refuses_what_is_not_a_finite_decimal_in_range(text):
    with pytest.raises(UsageError) as e:
        parse_number(text, "--years", 0.001, 100)
    assert str(e.value).startswith("--years ") and "\n" not in str(e.value)


def test_parse_number_takes_plain_decimals():
    assert parse_number(" 2.5 ", "--x", 0, 10) == 2.5 and parse_number("1e1", "--x", 0, 10) == 10.0


@pytest.mark.parametrize("p,text", [
    (0.837, "1 in 1.2"), (0.0417, "1 in 24"), (1 / 5882, "1 in 5,900"), (5.5e-8, "1 in 1.8×10⁷"),
    (1 / 1.3e11, "1 in 1.3×10¹¹"), (6.7e-13, "1 in 1.5×10¹²"), (1e-16, "1 in >10¹⁵"), (0.0, "0"), (None, "-"),
    (float("nan"), "-"), (1.0, "1 in 1.0"), (1e-6, "1 in 10⁶"), (1 / 999_999, "1 in 10⁶"), (1 / 9.96e6, "1 in 10⁷"),
    (1 / 994_000, "1 in 990,000"),
])
def test_odds_reads_as_one_in_n_with_two_figures(p, text):
    from zfslab.model.units import odds
    assert odds(p) == text
