"""How the oracle builds and runs its harness for each OpenZFS version, without building it: the
API flags read from each version's headers, the chroot wrapper, the cache key's versions."""

from pathlib import Path

import pytest

from tests.oracle import chroot, harness

# The prototypes as each version's libzfslinux-dev declares them
HEADERS = {
    "2.1.11": ("extern int spa_prop_get(spa_t *spa, nvlist_t **nvp);",
               ("int dmu_tx_assign(dmu_tx_t *tx, uint64_t txg_how);\n"
                "void dmu_write(objset_t *os, uint64_t object, uint64_t offset, uint64_t size,\n"
                "    const void *buf, dmu_tx_t *tx);")),
    "2.3.9": ("extern int spa_prop_get(spa_t *spa, nvlist_t *nvp);",
              ("\tDMU_TX_WAIT\t\t= (1 << 0),\n"
               "void dmu_write(objset_t *os, uint64_t object, uint64_t offset, uint64_t size,\n"
               "    const void *buf, dmu_tx_t *tx);")),
    "2.4.4": ("extern int spa_prop_get(spa_t *spa, nvlist_t *nvp);\n"
              "extern metaslab_class_t *spa_special_embedded_log_class(spa_t *spa);",
              ("\tDMU_TX_WAIT\t\t= (1 << 0),\n"
               "void dmu_write(objset_t *os, uint64_t object, uint64_t offset, uint64_t size,\n"
               "    const void *buf, dmu_tx_t *tx, dmu_flags_t flags);")),
}


# metaslab.h: metaslab_class_get_dalloc() from 2.3 (absent from 2.1.11's headers)
METASLAB = {"2.1.11": "uint64_t metaslab_class_get_alloc(metaslab_class_t *);",
            "2.3.9": "uint64_t metaslab_class_get_dalloc(metaslab_class_t *);",
            "2.4.4": "uint64_t metaslab_class_get_dalloc(metaslab_class_t *);"}


@pytest.mark.parametrize("version,flags", [
    ("2.1.11", []),
    ("2.3.9", ["-DZFS_23", "-DZFS_DMU_TX_WAIT", "-DZFS_DALLOC"]),
    ("2.4.4", ["-DZFS_23", "-DZFS_DMU_TX_WAIT", "-DZFS_DMU_WRITE_FLAGS", "-DZFS_DALLOC", "-DZFS_SPECIAL_ELOG"]),
])
def test_api_flags_follow_the_headers(tmp_path, version, flags):
    spa, dmu = HEADERS[version]
    sys_dir = tmp_path / "opt/zfs/usr/include/libzfs/sys"
    sys_dir.mkdir(parents=True)
    (sys_dir / "spa.h").write_text(spa)
    (sys_dir / "dmu.h").write_text(dmu)
    (sys_dir / "metaslab.h").write_text(METASLAB[version])
    target = harness.Target("trixie", f"{version}-1", tmp_path, "/opt/zfs/usr")
    assert harness.api_flags(target) == ["-D_GNU_SOURCE", *flags]


def test_an_unpacked_library_is_linked_with_an_rpath(tmp_path):
    sys_dir = tmp_path / "opt/zfs-trixie/usr/include/libzfs/sys"
    sys_dir.mkdir(parents=True)
    for name, text in zip(("spa.h", "dmu.h"), HEADERS["2.3.9"]):
        (sys_dir / name).write_text(text)
    argv = harness.compile_argv(harness.chroot_target("trixie", tmp_path, "2.3.9-0+deb13u1"), "s.c", "o")
    lib = "/opt/zfs-trixie/usr/lib/x86_64-linux-gnu"
    assert f"-L{lib}" in argv and f"-Wl,--disable-new-dtags,-rpath,{lib}" in argv
    assert "-I/opt/zfs-trixie/usr/include/libzfs" in argv


def test_a_chroot_target_runs_chrooted_with_dev_shm_bound():
    target = harness.chroot_target("trixie-backports", Path("/cache/trixie-x"), "2.4.4-1~bpo13+1")
    assert target.version == "2.4.4"
    argv = harness.wrap(target, ["/dev/shm/d/zspace", "-a", "12"])
    assert argv[:4] == ["unshare", "--mount", "--propagation", "private"]
    assert argv[-4:] == ["/cache/trixie-x", "/dev/shm/d/zspace", "-a", "12"]
    assert 'mount --bind /dev/shm "$0/dev/shm"' in argv[argv.index("-c") + 1]
    assert harness.wrap(harness.Target("bookworm", "2.1.11-1+deb12u1", None), ["zspace"]) == ["zspace"]


def test_the_cache_key_reads_both_suites_from_madison():
    out = ("libzfslinux-dev | 2.4.4-1~bpo13+1 | http://deb.debian.org/debian trixie-backports/contrib amd64 Packages\n"
           "libzfslinux-dev | 2.3.9-0+deb13u1 | http://deb.debian.org/debian trixie/contrib amd64 Packages\n")
    assert chroot.madison_versions(out) == {"trixie": "2.3.9-0+deb13u1", "trixie-backports": "2.4.4-1~bpo13+1"}
    assert chroot.madison_versions("") == {"trixie": "unknown", "trixie-backports": "unknown"}
