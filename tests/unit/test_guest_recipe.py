"""The test guest's bookkeeping, without booting anything: which image serves which OpenZFS
series, what its cache key follows, and which in-guest files each series runs
(docs/test-guest.md#image-cache, #the-suite-inside)."""

from tests.e2e import test_guest
from tests.e2e.guest import guest


def test_two_series_share_the_trixie_image_and_21_keeps_bookworm():
    assert guest.DIST == {"2.1": "bookworm", "2.3": "trixie", "2.4": "trixie"}
    assert set(test_guest.SUITES) == {"2.3", "2.4"} and test_guest.SUITES["2.4"] == ()  # the newest runs all


def test_the_key_follows_each_version_debian_serves(monkeypatch):
    served = {"zfs-dkms/trixie": "2.3.9-0+deb13u1", "zfs-dkms/trixie-backports": "2.4.4-1~bpo13+1",
              "linux-image-amd64/trixie": "6.12.117-1"}
    monkeypatch.setattr(guest, "package_versions", lambda dist: dict(served))
    key = guest.image_key("trixie")
    assert key.startswith("trixie-") and key == guest.image_key("trixie")
    assert guest.image_key("bookworm") != key
    for pkg in served:
        newer = dict(served, **{pkg: served[pkg] + "+1"})
        monkeypatch.setattr(guest, "package_versions", lambda dist, v=newer: dict(v))
        assert guest.image_key("trixie") != key, pkg


def test_named_files_missing_from_the_mounted_checkout_are_left_out(monkeypatch, tmp_path):
    inside = tmp_path / "tests" / "e2e" / "inside"
    inside.mkdir(parents=True)
    for name in ("test_drivers.py", "test_zfs_contract.py"):
        (inside / name).write_text("")
    monkeypatch.setenv("ZFSLAB_GUEST_REPO", str(tmp_path))
    assert test_guest._tests_for("2.3").split() == [
        "/mnt/repo/tests/e2e/inside/test_drivers.py", "/mnt/repo/tests/e2e/inside/test_zfs_contract.py"]
    (inside / "test_expansion.py").write_text("")
    assert test_guest._tests_for("2.3").endswith("/mnt/repo/tests/e2e/inside/test_expansion.py")
    assert test_guest._tests_for("2.4") == ("/mnt/repo/tests/e2e/inside "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_footprint.py "
                                            "--ignore=/mnt/repo/tests/e2e/inside/test_footprint_ci.py")
