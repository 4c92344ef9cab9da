import pytest

from zfslab.errors import LayoutError
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.zpool_syntax import check_pool_name, replication_mismatch, zpool_create_argv, zpool_vdev_args
from zfslab.model.zpool_vdev_list import parse_zpool_vdevs


@pytest.mark.parametrize("text,disks,vdevs,guaranteed,best", [
    ("raidz2:6", 6, 1, 2, 2),
    ("2xraidz2:6", 12, 2, 2, 4),
    ("12xmirror:2", 24, 12, 1, 12),
    ("mirror:3", 3, 1, 2, 2),
    ("24xdisk", 24, 24, 0, 0),
    ("draid2:8d:24c:1s", 24, 1, 2, 2),
    ("raidz2:11+spare:1", 12, 1, 2, 2),
    ("raidz3:23+spare:1", 24, 1, 3, 3),
    ("mirror", 2, 1, 1, 1),
    ("stripe:4", 4, 4, 0, 0),
    ("raidz:5", 5, 1, 1, 1),
])
def test_parse_layout(text, disks, vdevs, guaranteed, best):
    layout = parse_layout(text)
    assert (layout.disks, layout.top_level_vdevs) == (disks, vdevs)
    assert (layout.failures_guaranteed, layout.failures_best_case) == (guaranteed, best)


@pytest.mark.parametrize("text,canonical", [
    ("raidz2:6", "raidz2:6"), ("RAIDZ2:6", "raidz2:6"), ("raidz:5", "raidz1:5"), ("mirror", "mirror:2"),
    ("stripe:4", "4xdisk"), ("disk+disk+disk", "3xdisk"), ("raidz2:6+raidz2:6", "2xraidz2:6"),
    ("draid2:24c", "draid2:8d:24c:0s"), ("draid:5c", "draid1:4d:5c:0s"),
    ("raidz2:6+spare:1+spare:1", "raidz2:6+spare:2"), ("2xraidz1:5+mirror:2", "2xraidz1:5+mirror:2"),
])
def test_canonical_form(text, canonical):
    assert str(parse_layout(text)) == canonical
    assert parse_layout(canonical) == parse_layout(text)


@pytest.mark.parametrize("text,message", [
    ("raidz3:3", "raidz3:3: a raidz3 vdev needs more disks than its parity (3): at least raidz3:4"),
    ("raidz2", "raidz2: say how many disks, e.g. raidz2:6"),
    ("raid5:4", "unknown vdev kind 'raid5' in 'raid5:4'; use disk, mirror, raidz1, raidz2, raidz3, draid or spare"),
    ("0xmirror:2", "0xmirror:2: the count must be at least 1, got 0"),
    ("-2xmirror:2", "cannot read '-2xmirror:2': write [COUNTx]KIND[:WIDTH]"),
    ("mirror:1", "mirror:1: a mirror needs at least 2 disks, got width=1"),
    ("raidz4:8", "raidz4:8: raidz parity is 1, 2 or 3, got 4"),
    ("raidz2:300", "raidz2:300: a vdev has at most 255 disks, got width=300"),
    ("raidz2:x", "raidz2:x: the width must be a whole number, got 'x'"),
    ("disk:3", "disk:3: a disk vdev has one disk; write 3xdisk for a stripe of 3"),
    ("draid2:8d", "draid2:8d: say how many children the dRAID has, e.g. draid2:8d:24c"),
    ("draid2:30d:24c", "draid2:30d:24c: a group of 30 data + 2 parity needs 32 disks but only 24 children are not spares; use at most 22d"),
    ("draid2:8d:10c:1s", "draid2:8d:10c:1s: a group of 8 data + 2 parity needs 10 disks but only 9 children are not spares; use at most 7d"),
    ("draid4:8d:24c", "draid4:8d:24c: dRAID parity is 1, 2 or 3, got 4"),
    ("draid2:8d:300c", "draid2:8d:300c: a vdev has at most 255 disks, got width=300"),
    ("draid2:8x:24c", "draid2:8x:24c: write dRAID as draidP:Dd:Cc:Ss, e.g. draid2:8d:24c:1s"),
    ("spare:2", "a layout needs at least one data vdev"),
    ("", "empty layout"),
])
def test_errors_name_the_bad_token_and_what_is_valid(text, message):
    with pytest.raises(LayoutError) as e:
        parse_layout(text)
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_zpool_vdev_list_round_trip():
    words = "raidz2 sda sdb sdc sdd sde sdf raidz2 sdg sdh sdi sdj sdk sdl spare sdm"
    layout, devices = parse_zpool_vdevs(words)
    assert str(layout) == "2xraidz2:6+spare:1"
    assert devices == [f"sd{c}" for c in "abcdefghijklm"]
    assert zpool_vdev_args(layout, devices) == words.split()


@pytest.mark.parametrize("text", ["mirror:2+disk", "raidz1:3+2xdisk", "disk+mirror:3+disk", "mirror:2+disk+spare:1"])
def test_plain_disks_are_written_before_grouped_vdevs(text):
    """After 'mirror a b', a bare 'c' joins that mirror: zpool would build a 3-way mirror."""
    layout = parse_layout(text)
    devices = [f"d{i}" for i in range(layout.all_disks)]
    again, again_devices = parse_zpool_vdevs(zpool_vdev_args(layout, devices))

    def top_level_vdevs(lay):  # the pool's vdevs, whatever order they are written in
        return sorted((g.kind.value, g.width, g.parity) for g in lay.groups for _ in range(g.count))
    assert top_level_vdevs(again) == top_level_vdevs(layout)
    assert again.hot_spares == layout.hot_spares
    assert sorted(again_devices) == sorted(devices)


@pytest.mark.parametrize("words,layout", [
    ("sda sdb sdc", "3xdisk"),
    ("mirror a b mirror c d mirror e f", "3xmirror:2"),
    ("raidz a b c", "raidz1:3"),
    ("draid2:4d:1s a b c d e f g h", "draid2:4d:8c:1s"),
    ("draid2:4d:8c:1s a b c d e f g h", "draid2:4d:8c:1s"),
    ("raidz1 a b c d mirror e f", "raidz1:4+mirror:2"),
])
def test_parse_zpool_vdevs(words, layout):
    assert str(parse_zpool_vdevs(words)[0]) == layout


@pytest.mark.parametrize("words,message", [
    ("raidz2 a b c d special raidz1 e f g", "'raidz1': zpool create takes only mirrors or single disks as special"),
    ("raidz2 a b c d log e log f", "'log' can be given only once"),
    ("mirror", "'mirror' in the vdev list has no devices after it"),
    ("draid2:4d:9c a b c d e f g h", "draid2:4d:9c names 9 children but 8 devices follow it"),
    ("raidz3 a b c", "raidz3:3: a raidz3 vdev needs more disks"),
])
def test_parse_zpool_vdevs_errors(words, message):
    with pytest.raises(LayoutError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_zpool_vdevs(words)


def test_zpool_create_argv():
    layout = parse_layout("draid2:4d:8c:1s")
    argv = zpool_create_argv("tank", layout, [f"d{i}" for i in range(8)], ashift=12, fs_props={"compression": "off"})
    assert argv == ["zpool", "create", "-o", "ashift=12", "-O", "compression=off", "tank",
                    "draid2:4d:8c:1s", "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7"]
    assert "-f" not in argv
    assert zpool_create_argv("t", parse_layout("disk"), ["a"], force=True)[:3] == ["zpool", "create", "-f"]


def test_device_count_and_duplicates_are_checked():
    with pytest.raises(LayoutError, match=r"raidz2:6 needs 6 devices, got 5"):
        zpool_vdev_args(parse_layout("raidz2:6"), list("abcde"))
    with pytest.raises(LayoutError, match=r"device b is given twice"):
        zpool_vdev_args(parse_layout("mirror:2+mirror:2"), list("abcb"))


def test_describe():
    assert parse_layout("2xraidz2:6+spare:1").describe() == "2 × raidz2, 6 wide (4 data + 2 parity) + 1 hot spare"
    assert parse_layout("24xdisk").describe() == "stripe of 24 disks (no redundancy)"
    assert "1 distributed spare" in parse_layout("draid2:8d:24c:1s").describe()


def test_group_is_checked_where_it_is_built():
    with pytest.raises(LayoutError):
        VdevGroup(VdevKind.RAIDZ, width=2, parity=2)
    with pytest.raises(LayoutError):
        Layout((), 1)


# --- hostile input (issue 19) -------------------------------------------------------------

@pytest.mark.parametrize("text", ["raidz2:²", "raidz2:٦", "²xmirror:2", "mirror:６", "draid2:8d:２4c", "raidz²:6",
                                  "spare:³+mirror:2", "raidz2:" + "9" * 5000])
def test_the_grammar_takes_ascii_digits_only(text):
    with pytest.raises(LayoutError):
        parse_layout(text)


@pytest.mark.parametrize("text,message", [
    ("10000000xmirror:2", "10000000xmirror:2: the count is at most 1024, got 10000000"),
    ("spare:100000000+mirror:2", "spare:100000000: the number of spares is at most 1024, got 100000000"),
    ("1000000000xmirror:2", "1000000000xmirror:2: the count is at most 1024, got 1000000000"),
    ("mirror:256", "mirror:256: a vdev has at most 255 disks, got width=256"),
    ("draid1:8d:300c", "draid1:8d:300c: a vdev has at most 255 disks, got width=300"),
    ("mirror:99999999999", "mirror:99999999999: the width is at most 1000000000, got 99999999999"),
    ("600xmirror:2", "600xmirror:2 has 1200 disks; zfslab models pools of at most 1024 disks"),
    ("+".join(["disk"] * 1025), "a layout of 1025 parts: zfslab models pools of at most 1024 disks"),
])
def test_layouts_are_bounded_where_the_text_is_read(text, message):
    with pytest.raises(LayoutError) as e:
        parse_layout(text)
    assert str(e.value) == message


def test_the_largest_layouts_still_parse():
    assert parse_layout("1024xdisk").disks == 1024
    assert parse_layout("4xraidz3:255+spare:4").disks == 1024
    assert parse_layout("mirror:255").disks == 255


def test_a_huge_token_is_shown_short():
    with pytest.raises(LayoutError) as e:
        parse_layout("x" * 100_000)
    assert len(str(e.value)) < 300


@pytest.mark.parametrize("name", ["tank", "Tank2", "a", "pool_1-x:y.z", "tankmirror",
                                  "c", "cache1", "logs", "t" * 239])
def test_pool_names_zpool_accepts(name):
    assert check_pool_name(name) == name


@pytest.mark.parametrize("name,why", [
    ("", "empty"), ("my pool", "' ' is not allowed"), ("1tank", "begins with a letter"), ("_x", "begins with a letter"),
    ("mirror", "reserved"), ("mirror2", "reserved"), ("raidz", "reserved"), ("raidz3x", "reserved"),
    ("draid", "reserved"), ("spare", "reserved"), ("log", "reserved"), ("cache", "reserved"),
    ("special", "reserved"), ("dedup", "reserved"), ("c0", "Solaris disks"), ("c1t0d0", "Solaris disks"),
    ("tank/fs", "'/' is not allowed"), ("tank$(reboot)", "'$' is not allowed"), ("tänk", "'ä' is not allowed"),
    ("t" * 240, "at most 239 characters"), ("tank\n", "'\\n' is not allowed"),
])
def test_pool_names_zpool_refuses(name, why):
    with pytest.raises(LayoutError) as e:
        check_pool_name(name)
    assert why in str(e.value) and "\n" not in str(e.value)


def test_the_create_command_checks_the_pool_name_and_devices():
    with pytest.raises(LayoutError, match="reserved"):
        zpool_create_argv("mirror", parse_layout("mirror:2"), ["a", "b"])
    with pytest.raises(LayoutError, match="cannot begin with '-'"):
        zpool_create_argv("tank", parse_layout("mirror:2"), ["-f", "b"])
    with pytest.raises(LayoutError, match="control characters"):
        zpool_create_argv("tank", parse_layout("mirror:2"), ["a\nb", "c"])


@pytest.mark.parametrize("text,needs_force", [
    ("mirror:2+raidz2:6", True), ("disk+mirror:2", True), ("mirror:2+mirror:3", True), ("raidz1:5+raidz2:6", True),
    ("raidz2:6+draid1:4d:8c", True), ("mirror:3+raidz1:4", True),
    ("raidz2:6", False), ("2xmirror:2", False), ("3xdisk", False), ("raidz2:6+raidz2:8", False),
    ("raidz2:6+draid2:4d:8c", False), ("mirror:3+raidz2:6", False), ("raidz2:6+spare:2", False),
])
def test_replication_mismatch_follows_zpool(text, needs_force):
    assert (replication_mismatch(parse_layout(text)) is not None) == needs_force


def test_create_argv_keeps_its_default_for_bench():
    # bench (system/bench.py) calls it without force: -f also overrides zpool's in-use checks
    argv = zpool_create_argv("zfslab-bench", parse_layout("mirror:2+raidz2:6"), [f"d{i}" for i in range(8)])
    assert "-f" not in argv


@pytest.mark.parametrize("words,layout,order", [
    ("raidz2 a b c d e f special mirror g h log mirror i j cache k",
     "raidz2:6+special=mirror:2+log=mirror:2+cache:1", "abcdefghijk"),
    ("mirror a b log c special mirror d e mirror f g spare h cache i j",
     "mirror:2+special=2xmirror:2+log=disk+spare:1+cache:2", "abdefgchij"),
    ("raidz1 a b c dedup mirror d e special f", "raidz1:3+special=disk+dedup=mirror:2", "abcfde"),
    # 'spare' ends the special section (construct_spec resets is_special): the mirror after it holds data
    ("raidz2 a b c d special mirror e f spare g mirror h i", "raidz2:4+mirror:2+special=mirror:2+spare:1", "abcdhiefg"),
])
def test_zpool_vdev_list_with_classes_round_trips(words, layout, order):
    parsed, devices = parse_zpool_vdevs(words)
    assert str(parsed) == layout
    assert devices == list(order)
    again, _ = parse_zpool_vdevs(zpool_vdev_args(parsed, devices))
    assert again == parsed


@pytest.mark.parametrize("text,canonical,all_disks", [
    ("raidz2:6+special=mirror:2+log=mirror:2+cache:2", "raidz2:6+special=mirror:2+log=mirror:2+cache:2", 12),
    ("log=mirror:2+raidz2:6+special=mirror:2@1TB+special=mirror:2@1TB", "raidz2:6+special=2xmirror:2@1TB+log=mirror:2", 12),
    ("2xmirror:2+dedup=mirror:3+special=disk+cache:1@2TB+spare:1", "2xmirror:2+special=disk+dedup=mirror:3+spare:1+cache:1@2TB", 10),
])
def test_class_grammar_canonical_form(text, canonical, all_disks):
    layout = parse_layout(text)
    assert str(layout) == canonical
    assert parse_layout(canonical) == layout
    assert layout.all_disks == all_disks


@pytest.mark.parametrize("text,message", [
    ("raidz2:6+special=raidz1:3", "special=raidz1:3: zpool create takes only mirrors or single disks as special vdevs"),
    ("raidz2:6+l2arc=disk", "l2arc=disk: 'l2arc' is not an allocation class"),
    ("raidz2:6+cache=disk", "cache=disk: 'cache' is not an allocation class; write cache devices as cache:2"),
    ("raidz2:6+special=", "special=: say which vdev, e.g. special=mirror:2"),
    ("raidz2:6+log=spare:1", "log=spare:1: hot spares belong to the pool"),
    ("raidz2:6@12TB+special=mirror:2", "raidz2:6@12TB+special=mirror:2: the data disks are sized; give the size"),
    ("raidz2:6+cache:x", "cache:x: the number of cache devices must be a whole number"),
])
def test_class_grammar_errors(text, message):
    with pytest.raises(LayoutError) as e:
        parse_layout(text)
    assert str(e.value).startswith(message)


@pytest.mark.parametrize("text,reason", [
    ("raidz2:6+special=mirror:2", "each special mirror vdev survives 1 failed disk, each raidz2 vdev 2 (the special "
                                  "vdev (mirror:2) survives 1 failed disk, the data vdevs 2: losing it loses the pool"),
    ("raidz2:6+special=mirror:3+log=disk", None),  # logs are skipped (ZPOOL_CONFIG_IS_LOG)
    ("raidz1:5+special=mirror:2+dedup=mirror:2", None),
    ("3xmirror:2+special=disk", "both mirror and special disk vdevs are present"),
    ("3xmirror:2+special=mirror:3", "both 2-way mirror and 3-way special mirror vdevs are present"),
])
def test_special_vdevs_take_part_in_the_replication_check(text, reason):
    got = replication_mismatch(parse_layout(text))
    assert got == reason if reason is None else got.startswith(reason)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_class_token = st.builds(
    lambda cls, kind, n, w, size: f"{cls}={n}x{'disk' if kind == 'disk' else f'mirror:{w}'}{size}",
    st.sampled_from(["special", "dedup", "log"]), st.sampled_from(["disk", "mirror"]), st.integers(1, 3),
    st.integers(2, 4), st.sampled_from(["", "@400GB", "@1TB"]))


@settings(max_examples=200, derandomize=True)
@given(data=st.sampled_from(["raidz2:6", "3xmirror:2", "draid2:4d:10c:1s", "4xdisk"]),
       classes=st.lists(_class_token, max_size=4), spares=st.integers(0, 2), cache=st.integers(0, 2))
def test_class_layouts_round_trip_through_both_grammars(data, classes, spares, cache):
    tokens = [data, *classes] + [f"spare:{spares}"] * bool(spares) + [f"cache:{cache}"] * bool(cache)
    layout = parse_layout("+".join(tokens))
    assert parse_layout(str(layout)) == layout
    devices = [f"d{i}" for i in range(layout.all_disks)]
    words = zpool_vdev_args(layout, devices)
    assert words.count("log") <= 1 and words.count("cache") <= 1
    back, order = parse_zpool_vdevs(words)
    assert order == devices
    # sizes are not in a zpool vdev list: the shapes round-trip (neighbours of two sizes merge)
    assert back == parse_layout(str(layout).replace("@400GB", "").replace("@1TB", ""))
