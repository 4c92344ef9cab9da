"""Hostile command lines for zfslab (issue 19): one generator for the hypothesis fuzz test in
tests/property/test_fuzz_cli.py and for the long campaign of benchmarks/fuzz_cli.py.

The generator draws through a Chooser, so hypothesis can shrink what it finds while the campaign
draws from a seeded random.Random. Each command line comes with the files it reads (made here,
in the run's own folder) and the outputs it may write; everything else must stay as it was.

Safety (this runs as root): profile-disk only ever gets a path inside the run's folder that is
a regular file or does not exist, never a device. bench and drill come only as dry runs
(--dry-run first, before anything hostile), their disks only as names inside the run's folder
(files, folders, FIFOs or nothing: never a device, so the disk check refuses them before any
program could run), their --sandbox and --db inside it too; check_safe holds every generated
line to that before it runs. A fleet line (issue 38: --hosts or an inventory) always gives an
empty --disks, refused before any host is contacted, and names no host but 127.0.0.1; check_safe
asserts both. A pool line (pool_line, the campaign's --focus pool) reads only a damaged copy of a
captured pool in the run's own folder, which install_capture makes the runner answer from: no
zpool runs, and check_safe refuses a pool line with another capture, --hosts or --inventory.
No line writes through a symlink or aims one at a system file (the tree's
symlinks are read, never written through).
"""

from __future__ import annotations

import codecs
import errno
import os
import random
import sqlite3
import stat
import string
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

COMMANDS = ("plan", "capacity", "special-size", "expand", "risk", "layout", "validate", "report", "profile-disk", "bench",
            "drill", "footprint", "merge")
DISK_COMMANDS = ("bench", "drill")  # dry runs only, on names inside the run's folder (check_safe)
EXIT_CODES = {0, 2, 10}
POOL_EXIT_CODES = EXIT_CODES | {5}   # `zfslab pool NAME`: 5 when a stray word names a pool zpool list lacks

# Values a hostile tester types: unicode digits, huge/negative/nan/inf numbers, empty and long
# strings, shell and rich-markup metacharacters, control characters, format strings.
HOSTILE = [
    "", " ", "-", "--", "-1", "0", "-0", "00", "1", "9" * 30, "9" * 5000, "1e308", "1e400", "-1e308", "nan", "NaN",
    "inf", "-inf", "Infinity", "1e-7", "1e-400", "0.0", "4.5", "0x10", "1_000", "²", "٣", "１２", "٤TB", "½", "ↂ",
    "🐍", "a b", "$(reboot)", "`id`", "; rm -rf /", "|", "&&", "'", '"', "\\", "\n", "\r\n", "\t", "\x1b[31m", "[/]",
    "[bold]", ":smile:", "%s%n", "{}", "{0}", "/", ".", "~", "*", "?", "x" * 100_000, "\u202e", "\ufeff", "İ", "ß",
    "\x00",
]
NUMBERS = ["0", "1", "2", "3", "4", "5", "6", "8", "9", "10", "12", "16", "24", "100", "255", "256", "1000", "1024",
           "1025", "-1", "65536", "2147483648", "9" * 20, "0.5", "0.001", "1e-3", "99.9", "100.5", "1e12", "+5"]
SIZES = ["4TB", "1TB", "12TB", "4000787030016", "64MiB", "63MiB", "1B", "0TB", "4T", "1EB", "16EiB",
         "18446744073709551616", "9223372036854775807", "1000PB", "3.5TiB", ".5TB", "1PB", "100PB", "4 TB", "4tb", "4XB"]
ASHIFTS = ["9", "12", "13", "16"]
CALOMEL = ["1,stripe,1,1,108,50,204,1,single", "2,mirror,1,2,106,50,488,0,m", "2,stripe,2,1,237,73,434,0,s",
           "4,raidz1,1,4,300,120,600,0,z", "6,raidz2,1,6,400,160,700,0,z2", "24,stripe,24,1,1200,400,1800,1,all",
           "12,mirror,6,2,600,300,1500,0,mm", "11,raidz3,1,11,500,200,900,0,z3"]
CALOMEL_SUBSETS = [CALOMEL, CALOMEL[:2], [CALOMEL[0], CALOMEL[5], CALOMEL[3]], CALOMEL[1:], [CALOMEL[0]]]
DISK_SETS = ["24x4TB", "8x12TB", "6x4TB", "1x1TB", "4x4TB", "1024x4TB", "1025x4TB", "0x4TB", "2x64MiB", "3x1B",
             "²x4TB", "24x4T", "100x100PB", "97x4TB", "12 x 8TB",
             # issue 26: a count int() refuses (4,301 digits), in a mixed set too
             "1" * 4301 + "x4TB", "2x4TB," + "1" * 4301 + "x4TB", "000000000000000000024x4TB"]
KINDS = ["mirror", "raidz", "raidz1", "raidz2", "raidz3", "raidz4", "raidz0", "draid", "draid1", "draid2", "draid3",
         "disk", "stripe", "spare", "log", "cache", "RAIDZ2", "Mirror", "zraid", ""]
VERSIONS = ["2.1", "2.3.2", "0.8", "0.6.4", "0.6.5", "slop64", "2.4", "9.9", "zfs-2.2", "v2.1", "2.1.x", "2", "",
            "٢.٣", "２.４", "2.3.99999999999999999999", "2.3.2-1~bpo12+1"]   # issue 26: digits of other scripts
RECORDSIZES = ["128K", "1M", "16M", "512", "4K", "3K", "32M", "0", "128k", "1MiB", "256"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
ZDB_FILES = ["zdb-bb-special-2.3.txt", "zdb-bbb-special-2.1.txt", "zdb-bbbP-special-2.1.txt", "zdb-bbbbP-special-2.3.txt"]
FILE_SIZES = ["0", "1", "512", "4096", "4097", "131072", "131073", "1048576", "20000000", "1e3", "-1", "4K", "0x10",
              "18446744073709551616", "9" * 40, "12.5", " 77 ", "nan",
              # issue 26: sizes whose blocks no list can hold (2^63 - 1 at recordsize 512: 2^54 blocks)
              "9223372036854775807", "9223372036854775808", "18014398509481984", "٣", "7\x0c8"]
CHOICES = {
    "--priority": ["speed", "space", "safety", "balanced"], "--disk-class": ["hdd", "hdd-enterprise", "ssd", "nvme"],
    "--repair": ["parallel", "serial"], "--model": ["zfs", "classic", "wintelguy", "backblaze"],
    "--engine": ["markov", "montecarlo"], "--chart-format": ["png", "svg"], "--sector-size": ["512", "4096"],
}
POOLS = ["tank", "mirror", "raidz2", "draid", "spare1", "my pool", "c0", "c0t0d0", "log", "cache", "1abc", "t" * 300,
         "tank$(reboot)", "Tank-1:x.y", "a", "tank/fs", "tänk"]
DEVICES = ["a", "b", "c", "d", "/dev/sdb", "/dev/disk/by-id/ata-X", "a b", "$(reboot)", "-f", "[/]", ":smile:",
           "x\ny", "'", "sd%s", "DISK1", "DISK1"]
VDEV_WORDS = ["mirror", "raidz", "raidz2", "raidz3", "draid2", "draid2:4d:8c", "draid1:2d:4c:1s", "spare", "log",
              "cache", "special", "dedup", "sda", "sdb", "sdc", "sdd", "sde", "sdf", "sdg", "-f", "²"]
DISK_MODELS = ["hdd7200", "hdd5400", "ssd", "nvme", "bogus"]
PROFILE_KEYS = ["name", "seq_read_mb_s", "seq_write_mb_s", "rand_read_iops_qd1", "rand_read_iops_qd8", "rand_write_iops",
                "sync_write_ms", "inner_fraction", "rewrite_mb_s", "source", "bogus"]
TOML_VALUES = ["100", "0", "-1", "nan", "inf", "-inf", '"x"', '"[/]"', "[1, 2, 3]", "true", "1e400", "1e-300",
               "0.5", '""', "{a = 1}"]
HOST_KEYS = ["write_mb_s", "read_mb_s", "rewrite_parallel", "parity_mb_s", "cpus", "bogus"]
CSV_COLUMNS = ["disks", "kind", "vdevs", "width", "write_MBps", "rewrite_MBps", "read_MBps", "calibration", "label"]
CSV_KINDS = ["stripe", "mirror", "raidz1", "raidz2", "raidz3", "raid5", ""]
DISK_NAMES = ["sda", "sdb", "nvme0n1", "vdev0", "disk.img", "ata-WDC_WD40-X", "a b", "[x]", "-f", "$(reboot)", "é",
              "x\ny", "sd%s", "..x", " sdc", "z" * 300]
SUITES = ["quick", "ars", "seq", "bonnie", "nope", "QUICK", "", "job.fio"]
FIO_SIZES = ["1g", "4g", "64m", "16g", "1", "0", "1x", "2p", "1t", "4G", "512k", "1e3", "-1g"]
SCENARIO_SETS = ["degraded,resilver,corrupt", "degraded", "resilver", "corrupt", "corrupt,degraded", ",", "",
                 "degraded,nope", "DEGRADED", "resilver,,corrupt"]
# names an output may get, all inside the run's folder: a missing folder, an existing folder or file, odd names
OUTPUT_NAMES = ["out.html", "report.html", "missing/out.html", "existing_dir", "existing_file", "", ".",
                "out dir/x.html", "[x].html", "-x.html", "new.toml", "é.html", "a" * 300 + ".html",
                "existing_file/all.sqlite"]   # issue 38: a folder -o cannot be written in (a file, not a folder)


# Issue 38's items 5-8 at the sizes it names (and beyond): the campaign counts the runs that reach each
ISSUE_38_SIZES = {
    "ini-doubled": "5: INI [gI:children] naming gI+1 twice, >= 22 levels (22: 496 bytes)",
    "yaml-doubled": "5: YAML anchors naming the group below twice, >= 8 levels (8: 396 bytes)",
    "laughs-8": "6: YAML billion laughs, 8 levels (9^8 strings)",
    "laughs-9": "6: YAML billion laughs, 9 to 12 levels",
    "sections": "7: >= 400 sections of h[1:20000].invalid (400: 10 KB)",
    "sparse-sample": "8: footprint --sample 1s --recordsize 4K, a >= 1 TB sparse file",
    "sparse-footprint": "8: footprint, a >= 1 TB sparse file (other options)",
    "sparse-plan": "8: plan --data-from DIR, a >= 1 TB sparse file",
    "sparse-scattered": "8: footprint --sample, 3 sparse files >= 1 TB with MiB of data scattered",
    # the issue's exact inputs among them
    "ini-doubled-22": "5 exactly: INI, 22 levels, 496 bytes",
    "yaml-doubled-8": "5 exactly: YAML anchors, 8 levels",
    "laughs-543": "6 exactly: billion laughs of 8 or 9 levels, 543 bytes",
    "sections-400": "7 exactly: 400 sections of h[1:20000].invalid",
    "sparse-1TB-sample": "8 exactly: footprint --sample 1s --recordsize 4K, a 1 TB or 1 TiB sparse file",
}
TB = 10**12
SPARSE_SIZES = [TB, 1 << 40, 8 * TB, 8 << 40]   # 1 TB, 1 TiB, 8 TB, 8 TiB: holes, nothing on disk
LAUGHS_543 = 543   # issue 38 item 6: the billion laughs that took 772 MB, in bytes


class Chooser(Protocol):
    def pick(self, options: Sequence[T]) -> T: ...
    def integer(self, lo: int, hi: int) -> int: ...
    def text(self, max_size: int) -> str: ...
    def binary(self, max_size: int) -> bytes: ...


class RandomChooser:
    """Draws from a seeded random.Random (the campaign)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def pick(self, options):
        return self.rng.choice(list(options))

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)

    def text(self, max_size):
        n = self.rng.randint(0, max_size)
        alphabets = [string.printable, "²³¹٠١٢٣٤٥٦٧٨٩０１２３ßİ€🐍\u202e\ufeff\x00\x1b\x7f", string.digits + ".eE+-x:"]
        alphabet = self.rng.choice(alphabets)
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def binary(self, max_size):
        return self.rng.randbytes(self.rng.randint(0, max_size))


@dataclass
class Case:
    """One command line, the files made for it, and the outputs it may write."""

    argv: list[str]
    workdir: str
    outputs: list[str] = field(default_factory=list)  # files or folders the command may create or replace
    tags: list[str] = field(default_factory=list)     # which of ISSUE_38_SIZES it draws at the issue's size
    capture: str | None = None   # a pool line's captured zpool/zfs output, which its runner answers from

    def __str__(self) -> str:
        import shlex
        return "zfslab " + shlex.join(a[:60] + "..." if len(a) > 60 else a for a in self.argv)


class Builder:
    """Draws one command line in `workdir`, creating its input files there."""

    def __init__(self, c: Chooser, workdir: str) -> None:
        self.c = c
        self.dir = workdir
        self.outputs: list[str] = []
        self.tags: list[str] = []   # ISSUE_38_SIZES this line reaches
        self.big_sparse = 0         # the largest sparse file made (sparse_tree)
        self.scattered = False      # sparse_tree made 3 files with MiB runs of data scattered in each
        self.serial = 0
        # how hostile this command line is: never (to reach the deep code), now and then, or often
        self.rate = c.pick([10**6, 10**6, 12, 4])

    # --- plain values -------------------------------------------------------------------------
    def hostile(self) -> str:
        return self.c.pick(HOSTILE) if self.c.integer(0, 3) else self.c.text(12)

    def maybe_hostile(self, valid: Callable[[], str], share: int = 1) -> str:
        """A valid value, or a hostile one in 1 of (this line's rate / share) draws."""
        return self.hostile() if self.c.integer(1, max(self.rate // share, 1)) == 1 else valid()

    def number(self, valid: Sequence[str] | None = None) -> str:
        """One of the option's plausible values, or any number at all (edges included), or a hostile one."""
        return self.maybe_hostile(lambda: self.c.pick(valid if valid and self.c.integer(0, 7) else NUMBERS))

    def size(self) -> str:
        plausible = ["4TB", "1TB", "12TB", "4000787030016", "3.5TiB", "1PB", "512GB"]
        return self.maybe_hostile(lambda: self.c.pick(plausible if self.c.integer(0, 3) else SIZES))

    def years(self) -> str:
        return self.maybe_hostile(lambda: ",".join(self.number(["1", "5", "10", "0.5", "2", "100"])
                                                   for _ in range(self.c.integer(1, 4))))

    def token(self) -> str:
        if self.c.integer(0, 5):  # well formed: a kind and a width that fit together
            kind = self.c.pick(["mirror", "raidz1", "raidz2", "raidz3", "disk", "spare", "draid2"])
            count = f"{self.c.pick(['2', '3', '4', '12', '100', '1024'])}x" if self.c.integer(0, 3) == 0 else ""
            if kind == "draid2":
                return count + f"draid2:{self.c.pick(['4', '8'])}d:{self.c.pick(['8', '12', '24', '255'])}c:" \
                               f"{self.c.pick(['0', '1', '2', '100'])}s"
            width = self.c.pick(["2", "3", "4", "6", "8", "12", "24", "255"]) if kind != "disk" else "1"
            token = f"{count}{kind}:{width}" if kind != "disk" or self.c.integer(0, 1) else count + kind
            if self.c.integer(0, 5) == 0:  # an allocation class: special=mirror:2@1TB, log=disk, cache:2
                cls = self.c.pick(["special", "dedup", "log", "cache", "spare", "l2arc"])
                token = f"cache:{width}" if cls == "cache" else f"{cls}={token}"
                token += f"@{self.size()}" if self.c.integer(0, 2) == 0 else ""
            return token
        kind = self.c.pick(KINDS)
        if kind.startswith("draid") and self.c.integer(0, 1):
            kind += "".join(f":{self.number()}{self.c.pick('dcsx')}" for _ in range(self.c.integer(0, 3)))
        count = f"{self.number()}x" if self.c.integer(0, 3) == 0 else ""
        width = f":{self.number()}" if self.c.integer(0, 2) else ""
        return count + kind + width

    def layout(self) -> str:
        return self.maybe_hostile(lambda: "+".join(self.token() for _ in range(self.c.pick([1, 1, 1, 2, 3]))))

    def layouts(self) -> str:
        return ",".join(self.layout() for _ in range(self.c.integer(1, 3)))

    def devices(self) -> str:
        if self.c.integer(0, 2) == 0:
            return ",".join(f"DISK{i}" for i in range(self.c.integer(0, 300)))
        return ",".join(self.maybe_hostile(lambda: self.c.pick(DEVICES)) for _ in range(self.c.integer(0, 10)))

    def vdevs(self) -> str:
        return " ".join(self.c.pick(VDEV_WORDS) for _ in range(self.c.integer(0, 14)))

    # --- files in the run's folder -----------------------------------------------------------
    def path(self, name: str) -> str:
        self.serial += 1
        return os.path.join(self.dir, f"{self.serial}-{name}")

    def output(self) -> str:
        """A path the command may write: only ever inside the run's folder."""
        name = self.c.pick(OUTPUT_NAMES)
        path = os.path.join(self.dir, name) if name else ""
        if name == "existing_file/all.sqlite":
            with open(os.path.join(self.dir, "existing_file"), "w") as f:
                f.write("a file where -o's folder should be\n")
        if name == "existing_dir":
            os.makedirs(path, exist_ok=True)
        elif name == "existing_file":
            with open(path, "w") as f:
                f.write("a file that was here before\n")
        if path:
            self.outputs.append(path)
        return path

    def special(self, path: str) -> str | None:
        """A directory, a missing file, a FIFO or an empty file instead of content, sometimes."""
        what = self.c.integer(0, 9)
        if what == 0:
            os.mkdir(path)
        elif what == 1:
            pass  # missing
        elif what == 2:
            os.mkfifo(path)
        elif what == 3:
            open(path, "wb").close()
        else:
            return None
        return path

    def write(self, path: str, data: bytes) -> str:
        with open(path, "wb") as f:
            f.write(data)
        return path

    def encode(self, text: str) -> bytes:
        encoding = self.c.pick(["utf-8", "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "latin-1", "cp1252"])
        return text.encode(encoding, errors="replace")

    def dataset(self) -> str:
        path = self.path("data.csv")
        if self.special(path):
            return path
        if self.c.integer(0, 7) == 0:
            return self.write(path, self.c.binary(4000))
        if self.c.integer(0, 1):  # rows of a real table, a cell made hostile now and then
            rows = [",".join(CSV_COLUMNS)]
            for line in self.c.pick(CALOMEL_SUBSETS):
                rows.append(",".join(self.maybe_hostile(lambda cell=cell: cell, share=4) for cell in line.split(",")))
            return self.write(path, self.encode("\n".join(rows) + "\n"))
        columns = [self.c.pick(CSV_COLUMNS) for _ in range(self.c.integer(0, 9))]
        if self.c.integer(0, 1):
            columns = CSV_COLUMNS[:8]
        rows = [",".join(columns)]
        for _ in range(self.c.integer(0, 8)):
            cells = []
            for col in columns:
                if col in ("disks", "vdevs", "width"):
                    cells.append(self.maybe_hostile(lambda: self.c.pick(["1", "2", "3", "4", "6", "8", "12", "24", "300"])))
                elif col == "kind":
                    cells.append(self.maybe_hostile(lambda: self.c.pick(CSV_KINDS)))
                elif col == "calibration":
                    cells.append(self.maybe_hostile(lambda: self.c.pick(["0", "1", "1"])))
                elif col.endswith("MBps"):
                    cells.append(self.maybe_hostile(lambda: self.c.pick(["100", "250", "1200", "", "0.05", "5e6"])))
                else:
                    cells.append(self.hostile())
            if self.c.integer(0, 5) == 0:
                cells = cells[: self.c.integer(0, len(cells))]  # a short row
            rows.append(",".join(cells))
        if self.c.integer(0, 15) == 0:
            rows.append("1,stripe,1,1," + "9" * 131_073 + ",1")  # over csv's field limit
        return self.write(path, self.encode("\n".join(rows) + "\n"))

    def file_sizes(self) -> str:
        """special-size's input: a size list, a size,count CSV, or zdb -bb output, hostile at times."""
        path = self.path("sizes.txt")
        if self.special(path):
            return path
        what = self.c.integer(0, 9)
        if what == 0:
            return self.write(path, self.c.binary(4000))
        if what == 1:  # a zdb -bb output captured in the guest, some lines made hostile
            with open(os.path.join(DATA, self.c.pick(ZDB_FILES)), encoding="utf-8") as f:
                lines = f.read().splitlines()
            lines = [self.maybe_hostile(lambda line=line: line, share=8) for line in lines]
            return self.write(path, self.encode("\n".join(lines) + "\n"))
        csv = what == 2
        lines = ["size_bytes,count"] if csv and self.c.integer(0, 1) else []
        for _ in range(self.c.integer(0, 40)):
            size = self.maybe_hostile(lambda: self.c.pick(FILE_SIZES), share=4)
            lines.append(f"{size},{self.number(['1', '10', '1000', '0', '1000000000000', '1000000000001'])}"
                         if csv else size)
        if self.c.integer(0, 15) == 0:
            lines.append("9" * 131_073)  # a line far longer than any number
        if self.c.integer(0, 15) == 0:   # issue 26: many distinct sizes, streamed (200 k lines, 2 MB)
            lines += [f"{n * 7919}" + (",3" if csv else "") for n in range(1, 200_001)]
        if self.c.integer(0, 20) == 0:   # issue 26: a large all-zero file, refused at its first chunk
            with open(path, "wb") as f:
                f.truncate(self.c.pick([4 << 20, 64 << 20]))
            return path
        return self.write(path, self.encode("\n".join(lines) + "\n"))

    def disk_model(self) -> str:
        if self.c.integer(0, 2):
            return self.maybe_hostile(lambda: self.c.pick(DISK_MODELS))
        path = self.path("p.toml")
        if self.special(path):
            return path
        lines = [f"{self.c.pick(PROFILE_KEYS)} = {self.c.pick(TOML_VALUES)}" for _ in range(self.c.integer(0, 8))]
        if self.c.integer(0, 1):  # a complete profile, perhaps with one bad value
            lines = [f"{k} = 100" for k in PROFILE_KEYS[1:7]] + lines[:1]
        if self.c.integer(0, 2) == 0:
            lines.append("[host]")
            lines += [f"{self.c.pick(HOST_KEYS)} = {self.c.pick(TOML_VALUES)}" for _ in range(self.c.integer(0, 3))]
        if self.c.integer(0, 9) == 0:
            lines = ["a = " + "[" * 50_000 + "]" * 50_000]
        data = self.encode("\n".join(lines) + "\n") if self.c.integer(0, 7) else self.c.binary(2000)
        return self.write(path, data)

    def db(self) -> str:
        path = self.path("results.sqlite")
        if self.special(path):
            return path
        what = self.c.integer(0, 9)
        if what <= 3:  # zfslab's own, whole or damaged
            data = bytearray(zfslab_db_bytes())
            if what == 1:
                data = data[: self.c.integer(0, len(data))]
            elif what == 2:
                for _ in range(self.c.integer(1, 20)):
                    data[self.c.integer(0, len(data) - 1)] = self.c.integer(0, 255)
            self.write(path, bytes(data))
            if what == 3:
                self.poison(path)
            return path
        if what == 4:  # a user's own database, with a table called runs
            conn = sqlite3.connect(path)
            conn.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, shutter REAL)")
            conn.execute("CREATE TABLE photos (name TEXT)")
            conn.commit()
            conn.close()
            return path
        if what == 5:
            conn = sqlite3.connect(path)
            conn.execute("CREATE TABLE schema_version (version)")
            conn.execute("INSERT INTO schema_version VALUES (?)", (self.c.pick(["two", 99, None, 1.5, b"x"]),))
            conn.commit()
            conn.close()
            return path
        if what == 6:
            return self.write(path, b"SQLite format 3\x00" + self.c.binary(5000))
        if what == 7:
            return self.write(path, self.encode("just some text\n"))
        if what == 8:  # issue 26: a WAL-mode file, its log beside it without the -shm index (issue 38: or with it)
            return self.wal_copy(path, own=bool(self.c.integer(0, 1)), shm=self.c.integer(0, 2) == 0)
        return self.write(path, self.c.binary(5000))

    def wal_copy(self, path: str, *, own: bool, shm: bool = False) -> str:
        """zfslab's file or another program's, copied with its -wal mid-write (no -shm): a reader
        that opened it with mode=ro would create the -shm beside it. With shm, the -shm too, as a
        running writer has it: a mode=ro reader would write its read marks there."""
        import shutil
        src = os.path.join(tempfile.mkdtemp(prefix="zfslab-wal-"), "src.db")
        try:
            if own:
                self.write(src, zfslab_db_bytes())
            conn = sqlite3.connect(src, isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA wal_autocheckpoint = 0")
            conn.execute("CREATE TABLE IF NOT EXISTS notes (x)")
            conn.execute("INSERT INTO notes VALUES (1)")
            shutil.copyfile(src, path)
            shutil.copyfile(src + "-wal", path + "-wal")
            if shm:
                shutil.copyfile(src + "-shm", path + "-shm")
            conn.close()
        finally:
            shutil.rmtree(os.path.dirname(src), ignore_errors=True)
        return path

    def poison(self, path: str) -> None:
        """Values a zfslab database never holds, in one of its rows."""
        if self.c.integer(0, 4) == 0:   # issue 26: options zfslab reads back (ashift 1e400 overflowed)
            value = self.c.pick(['{"ashift": 1e400}', '{"ashift": NaN}', '{"ashift": -1}', '[1]', '{"recordsize": 7}',
                                 '{"ashift": 12.5}', '{"ashift": true}'])
            conn = sqlite3.connect(path)
            try:
                conn.execute("UPDATE runs SET options_json = ?", (value,))
                conn.commit()
            except sqlite3.Error:
                pass
            conn.close()
            return
        table, column = self.c.pick([("runs", "started_at"), ("runs", "ram_bytes"), ("run_disks", "size_bytes"),
                                     ("run_disks", "device"), ("measurements", "write_mb_s"), ("measurements", "layout"),
                                     ("drills", "seconds"), ("drills", "verdict"), ("runs", "id")])
        value = self.c.pick(["x", -1, 0, 10**18, 1e308, float("inf"), b"\x00\xff", None, "raidz9:1", "[/]", 2**62])
        conn = sqlite3.connect(path)
        try:
            conn.execute(f"UPDATE {table} SET {column} = ?", (value,))
            conn.commit()
        except sqlite3.Error:
            pass
        conn.close()

    def inside_name(self, name: str) -> str:
        """A name that stays one entry of the run's folder: no '/' to leave it, no ',' to split a
        disk list into other names, not '.' or '..'."""
        name = name.replace("/", "_").replace(",", "_")
        return name if name.strip() not in ("", ".", "..") else f"x{name}"

    def disk(self) -> str:
        """A disk for bench or drill: a regular file, a folder, a FIFO or nothing, in the run's
        folder, by absolute path or (now and then) relative to it. Never a device."""
        name = self.inside_name(self.maybe_hostile(lambda: self.c.pick(DISK_NAMES)))
        path = os.path.join(self.dir, f"{self.serial}-{name}")
        self.serial += 1
        what = self.c.integer(0, 5)
        try:
            if what == 0:
                self.write(path, b"\x00" * self.c.integer(0, 4096))
            elif what == 1:
                self.write(path, self.c.binary(4096))
            elif what == 2:
                os.mkdir(path)
            elif what == 3:
                os.mkfifo(path)
        except (OSError, ValueError):  # a name the file system refuses (too long, a NUL): given all the same
            pass
        return os.path.basename(path) if self.c.integer(0, 4) == 0 else path

    def disks(self) -> str:
        names = [self.disk() for _ in range(self.c.integer(1, 8))]
        if self.c.integer(0, 5) == 0:
            names.append(self.c.pick(names))  # one disk named twice
        if self.c.integer(0, 7) == 0:
            names.insert(self.c.integer(0, len(names)), "")  # an empty element
        return ",".join(names)

    def sandbox(self) -> str:
        """A sandbox folder in the run's folder: missing, empty, nested and missing, or a file.
        Never one holding files: judging those (wipefs, blkid) starts programs."""
        path = os.path.join(self.dir, self.inside_name(self.maybe_hostile(lambda: self.c.pick(["sandbox", "s b", "[s]"]))))
        what = self.c.integer(0, 4)
        try:
            if what == 1:
                os.makedirs(path, exist_ok=True)
            elif what == 2:
                path = os.path.join(path, "deeper")
            elif what == 3 and not os.path.exists(path):
                self.write(path, b"not a folder\n")
        except (OSError, ValueError):
            pass
        return path

    def suite(self) -> str:
        name = self.maybe_hostile(lambda: self.c.pick(SUITES))
        if name == "job.fio":
            path = self.path("job.fio")
            if not self.special(path):
                self.write(path, self.encode("[global]\nrw=read\n[job]\nsize=1m\n"))
            return path
        return name

    def device(self) -> str:
        """profile-disk's device: a regular file in the run's folder, or a missing path. Never a device."""
        path = self.path(self.c.pick(["disk.img", "sdz", "nvme9n1"]))
        if self.c.integer(0, 1):
            self.write(path, b"\x00" * self.c.integer(0, 4096))
        return path

    def tree(self) -> str:
        """footprint's input: a folder of files of every kind a real tree holds (random, zeros, text,
        sparse, empty), with what it must pass over without hanging or following: FIFOs, a character
        device (/dev/zero's numbers: a reader that opened it would never finish), symlinks out of the
        tree and back up it (a loop). Or a size list, or a FIFO, a device or a missing path itself."""
        what = self.c.integer(0, 9)
        if what == 0:
            return self.file_sizes()
        path = self.path("tree")
        if what == 1:
            return self.special(path) or path
        if what == 2:
            os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 5)) if os.geteuid() == 0 else os.mkfifo(path)
            return path
        os.mkdir(path)
        for i in range(self.c.integer(0, 12)):
            name = os.path.join(path, self.inside_name(f"{i}-{self.c.text(8)}"))
            kind = self.c.integer(0, 11)
            try:
                if kind == 0:
                    os.mkfifo(name)
                elif kind == 1 and os.geteuid() == 0:
                    os.mknod(name, 0o600 | stat.S_IFCHR, os.makedev(1, 5))
                elif kind == 2:
                    os.symlink(self.c.pick(["..", "/etc", "/dev/zero", ".", "missing"]), name)
                elif kind == 3:   # all holes; now and then 1 TB to 8 TiB of them (issue 38 item 8)
                    self.sparse_file(name, self.c.pick([1, 4096, 1 << 20, 5 << 20, 1 << 20, 5 << 20, *SPARSE_SIZES]), 0)
                elif kind == 4:
                    os.makedirs(os.path.join(name, "a", "b"))
                    self.write(os.path.join(name, "a", "b", "x"), self.c.binary(3000))
                elif kind == 5:
                    self.write(name, self.encode("log line 42 ok\n" * self.c.integer(0, 20000)))
                elif kind == 6:
                    self.write(name, b"\x00" * self.c.pick([0, 1, 112, 4096, 131072, 300000]))
                else:
                    self.write(name, self.c.binary(self.c.pick([100, 5000, 200_000])))
            except (OSError, ValueError):  # a name the file system refuses: the tree goes on without it
                pass
        return path

    def sparse_file(self, name: str, size: int, extents: int, run_bytes: int = 0) -> int:
        """A file of `size` bytes, holes but for `extents` runs of data (text, random bytes or written
        zeros) at its start, its end, spread evenly or anywhere; `run_bytes`: runs of that many bytes
        of text or random data, spread evenly. Made new (O_EXCL, O_NOFOLLOW: never
        through a symlink), in the run's folder only. Returns the size it has: a file system that
        refuses the size (EFBIG) gets 1 TiB, then 5 MiB."""
        assert os.path.normpath(name).startswith(os.path.normpath(self.dir) + os.sep), name
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            for tried in (size, 1 << 40, 5 << 20):
                try:
                    os.ftruncate(fd, min(size, tried))
                    size = min(size, tried)
                    break
                except OSError:
                    continue
            where = "spread" if run_bytes else self.c.pick(["start", "end", "spread", "anywhere"])
            for k in range(extents):
                what = self.c.integer(0, 3)
                if run_bytes:   # seeded, so a seed makes the same bytes every time
                    data = (random.Random(self.c.integer(0, 2**31)).randbytes(run_bytes) if what % 2
                            else (b"scattered text %d " % k * (run_bytes // 17 + 1))[:run_bytes])
                else:
                    data = (b"hello sparse world " * self.c.pick([1, 216, 1000]) if what == 0 else b"\x00" * 4096
                            if what == 1 else self.c.binary(8192) if what == 2 else b"")
                if not data or len(data) > size:
                    continue
                room = size - len(data)
                if where == "start":
                    offset = min(room, k * 131072)
                elif where == "end":
                    offset = max(0, room - k * 131072)
                elif where == "spread":
                    offset = room // extents * k
                else:
                    offset = self.c.integer(0, room)
                os.pwrite(fd, data, offset)
        finally:
            os.close(fd)
        return size

    def sparse_tree(self) -> str:
        """issue 38 item 8: a folder of 1 to 3 sparse files of 1 TB to 8 TiB (holes: nothing on disk),
        with 0 to 1,000 runs of data each, and a small file beside them."""
        path = self.path("sparse")
        os.mkdir(path)
        biggest = 0
        # one in four: the issue's open point, 3 files with 1 MiB runs of data scattered (a tree mostly
        # holes, whose sample must count the holes and read only the data)
        self.scattered = self.c.integer(0, 3) == 0
        for i in range(3 if self.scattered else self.c.pick([1, 1, 2, 3])):
            size = self.c.pick([*SPARSE_SIZES, self.c.integer(TB, 8 << 40)])
            if self.scattered:
                made = self.sparse_file(os.path.join(path, f"{i}.img"), size, self.c.integer(2, 8), 1 << 20)
            else:
                made = self.sparse_file(os.path.join(path, f"{i}.img"), size, self.c.pick([0, 1, 2, 2, 100, 1000]))
            biggest = max(biggest, made)
        if self.c.integer(0, 1):
            self.write(os.path.join(path, "notes.txt"), self.encode("log line 42 ok\n" * self.c.integer(0, 2000)))
        self.big_sparse = max(self.big_sparse, biggest)
        return path

    def footprint_json(self) -> str:
        """plan --data-from's saved input: a footprint --json, sometimes damaged or hostile (issue 38:
        counts of 1e400 or 10**400, nesting 100,000 deep, wrong types)."""
        path = self.path("footprint.json")
        if self.special(path):
            return path
        value = self.maybe_hostile(lambda: self.c.pick(["1000", "0", "1", "3"]), share=2)
        if self.c.integer(0, 2) == 0:
            value = self.c.pick(["1e400", "-1e400", "1" + "0" * 400, "9" * 5000, "NaN", "Infinity", "-1", "2.5",
                                 "true", '"x"', "null", "[]", "{}", "9223372036854775807", "1e308"])
        size = self.c.pick(["131072", "4096", "0", "16777216", "16777217", "1e400", "-4096", "1099511627776"])
        saved = (f'{{"blocks":[[{size},{size},{value}]],"read_as_is":[[{size},{size},{value}]],'
                 f'"all_as_is":[[{size},{size},{value}]],"compression":"{self.c.pick(["off", "lz4", "zstd"])}",'
                 f'"recordsize_bytes":{self.c.pick(["131072", "1048576", "100000", "0", "1e400"])},"files":1,'
                 f'"directories":1,"pointers":0,"complete":{self.c.pick(["true", "false", "1", "null"])}}}')
        deep = self.c.integer(1, 200_000)
        body = self.c.pick([
            saved, saved, saved,
            f'{{"stored_logical_bytes": {value}, "records": 10, "logical_bytes": {value}}}',
            '{"layouts": []}', "[]", "null", '{"stored_logical_bytes": "x"}', "{", "",
            '{"a":' * deep + "1" + "}" * deep, "[" * deep + "]" * deep, "[" * deep,
        ])
        return self.write(path, self.encode(body))

    # --- issue 38: fleets named by --hosts or an inventory, always refused before any ssh --------
    def hosts_value(self) -> str:
        """A --hosts value: names ssh must never see, or 127.0.0.1 (the only address a test may name).
        A hostile value that happens to be a valid name ("1", "x") becomes 127.0.0.1:1."""
        value = self.c.pick(["a;>/tmp/x", "a$(touch${IFS}/tmp/x)", "-oProxyCommand=x", "127.0.0.1;id",
                             "root;x@127.0.0.1", "127.0.0.1:99999", "127.0.0.1:0", "", ",", "127.0.0.1,127.0.0.1",
                             "a b", "h\x00", "héte", "a|b", "`id`", "127.0.0.1:1", "root@127.0.0.1:1",
                             "127.0.0.1:1,root@127.0.0.1:2", self.hostile()])
        from zfslab.model.inventory import InventoryError, parse_hosts_option
        try:
            hosts = parse_hosts_option(value, "--hosts")
        except InventoryError:
            return value
        return value if all(h.destination == "127.0.0.1" for h in hosts) else "127.0.0.1:1"

    def inventory(self, issue_sizes: bool = False) -> str:
        """An inventory (INI or YAML) of the kinds that exploded (issue 38 items 5-7), or a plain one of
        127.0.0.1. With issue_sizes, only those kinds, at the sizes the issue names and beyond: INI
        children doubled 22 to 60 levels, YAML anchors doubled 8 to 16, billion laughs 8 (543 bytes)
        to 12 levels, 400 to 1,000 sections of h[1:20000].invalid."""
        yaml_file = bool(self.c.integer(0, 1))
        path = self.path("hosts.yml" if yaml_file else "hosts.ini")
        if not issue_sizes and self.special(path):
            return path
        tagged = len(self.tags)

        def write(text: str) -> str:
            """UTF-8 at the issue's sizes (its byte counts); else any encoding, and UTF-16 without its
            BOM, refused before the parser sees the inventory, drops the line's size tags."""
            data = text.encode() if issue_sizes else self.encode(text)
            if data != text.encode() and not data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE,
                                                                codecs.BOM_UTF16_BE)):
                del self.tags[tagged:]
            return self.write(path, data)
        n = self.c.integer(1, 45)
        if yaml_file:
            kind = self.c.pick([0, 1, 2, 3, 3, 3, 5, 5]) if issue_sizes else self.c.integer(0, 6)
            if kind <= 2:   # billion laughs: a0 holds 9 strings, each next anchor 9 of the one before
                return write(self.laughs(kind, issue_sizes))
            if kind == 3:   # a diamond through anchors: each group names the one before two or three times
                fan = self.c.pick([2, 2, 3])
                levels = self.c.pick([8, 8, 12, 16, self.c.integer(8, 16)]) if issue_sizes or self.c.integer(0, 1) \
                    else min(n, 13)
                lines = ["all:", "  children:", "    g0: &g0 {hosts: {127.0.0.1: }}"]
                lines += [f"    g{i}: &g{i} {{children: {{" + ", ".join(f"{x}{i}: *g{i - 1}" for x in "abc"[:fan])
                          + "}}" for i in range(1, levels + 1)]
                if fan == 2 and levels >= 8:
                    self.tags += ["yaml-doubled"] + (["yaml-doubled-8"] if levels == 8 else [])
            elif kind == 4:
                lines = ["all:", "  hosts:", f"    {self.c.pick(['127.0.0.1:[1:20000]', 'h[1:999999999][1:9]', 'a;b'])}:"]
            elif kind == 5:   # item 7 in YAML: a group of a 20,000-host range, 400 times and more
                count, pattern = self.sections(issue_sizes)
                lines = ["all:", "  children:"] + [f"    s{i}: {{hosts: {{'{pattern}': }}}}" for i in range(count)]
            else:
                lines = ["all:", "  hosts:", "    127.0.0.1:", f"      ansible_port: {self.c.pick(['1', '0', '99999'])}"]
            return write("\n".join(lines) + "\n")
        kind = self.c.pick([0, 0, 1, 1]) if issue_sizes else self.c.integer(0, 5)
        if kind == 0:     # each group names the next twice: 2^n paths (22 levels ending in 127.0.0.1:1: 496 bytes)
            if issue_sizes or self.c.integer(0, 1):
                n = self.c.pick([22, 22, 30, 40, 50, 51, 60, self.c.integer(22, 60)])
            text = "".join(f"[g{i}:children]\ng{i + 1}\ng{i + 1}\n" for i in range(n)) + f"[g{n}]\n127.0.0.1:1\n"
            if n >= 22:
                self.tags += ["ini-doubled"] + (["ini-doubled-22"] if n == 22 and len(text) == 496 else [])
        elif kind == 1:   # 400 sections (to 1,000) of a range of 20,000 hosts (or of ports of 127.0.0.1)
            count, pattern = self.sections(issue_sizes)
            text = "".join(f"[s{i}]\n{pattern}\n" for i in range(count))
        elif kind == 2:
            text = "".join(f"[g{i}]\n" for i in range(self.c.pick([10, 1001])))
        elif kind == 3:
            text = "[g]\n" + "\n".join(self.c.pick(["a;>/tmp/x", "127.0.0.1 ansible_host='a;b'",
                                                    "127.0.0.1 ansible_user='x y'", "h[1:99999999999999999999]",
                                                    "127.0.0.1 ansible_port=" + "9" * 5000,
                                                    "x ansible_host=" + "[" * 100_000]) for _ in range(3)) + "\n"
        elif kind == 4:
            text = "[g:children]\n" + "c\n" * self.c.pick([10, 10_001])
        else:
            text = "[g]\n127.0.0.1:1\n127.0.0.1 ansible_port=2\n"
        return write(text)

    def sections(self, issue_sizes: bool) -> tuple[int, str]:
        """How many sections and the host pattern each holds (issue 38 item 7: 400 of h[1:20000].invalid,
        10 KB, took 17.8 s and 1.5 GB). A name other than 127.0.0.1 only where the limits refuse the file."""
        count = self.c.pick([400, 400, 1000, self.c.integer(400, 1000)])
        pattern = "h[1:20000].invalid" if issue_sizes and self.c.integer(0, 3) else self.c.pick(
            ["h[1:20000].invalid", "h[1:20000].invalid", "127.0.0.1:[1:20000]", "127.0.0.1:[1:5000]",
             "127.0.0.1:[1:250]"])
        if pattern == "h[1:20000].invalid":
            self.tags += ["sections"] + (["sections-400"] if count == 400 else [])
        return count, pattern

    def laughs(self, where: int, issue_sizes: bool) -> str:
        """YAML's billion laughs (issue 38 item 6: 543 bytes took 772 MB, 9 levels 3.9 GB, as the error
        message rendered the aliased value): 1 to 12 levels, the last one named as ansible_host, as
        hosts or as a group. At 8 or 9 levels (the issue's file is not in the repository; 9 levels stand
        for 9^9 strings), now and then padded by a comment to the issue's 543 bytes."""
        levels = self.c.pick([8, 8, 9, 9, 10, 11, 12]) if issue_sizes or self.c.integer(0, 1) else self.c.integer(1, 8)
        lines = ["all:", "  vars:", '    a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        lines += [f"    a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
        last = f"*a{levels - 1}"
        lines += [["  hosts:", f"    h1: {{ansible_host: {last}}}"], [f"  hosts: {last}"],
                  ["  children:", f"    g: {last}"]][where]
        text = "\n".join(lines) + "\n"
        if levels in (8, 9) and len(text) <= LAUGHS_543 - 2 and (issue_sizes or self.c.integer(0, 1)):
            text = "#" + "-" * (LAUGHS_543 - len(text) - 2) + "\n" + text
        if levels >= 8:
            self.tags.append("laughs-8" if levels == 8 else "laughs-9")
        if len(text) == LAUGHS_543:
            self.tags.append("laughs-543")
        return text

ValueFn = Callable[[Builder], str | None]  # None: a flag without a value


def _risk_options() -> dict[str, ValueFn]:
    return {
        "--disk-class": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--disk-class"])),
        "--afr": lambda b: b.number(["1.5", "0.5", "5", "0.0001", "99.9"]), "--mtbf-hours": lambda b: b.number(["1000000", "1", "1e12", "50000"]), "--ber": lambda b: b.maybe_hostile(
            lambda: b.c.pick(["1e-14", "1e-15", "0", "1e-3", "2e-3"])),
        "--replace-hours": lambda b: b.number(["0", "48", "168", "1000000"]), "--resilver-mbps": lambda b: b.number(["50", "0.001", "10000000", "200"]),
        "--fill": lambda b: b.maybe_hostile(lambda: b.c.pick(["0.7", "1", "0.001", "0", "1.5"])),
        "--scrub-days": lambda b: b.number(["30", "0.01", "10000", "7"]), "--lse-per-hour": lambda b: b.maybe_hostile(
            lambda: b.c.pick(["0", "1e-6", "1", "2"])),
        "--years": lambda b: b.years(), "--repair": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--repair"])),
    }


def _flag(_b: Builder) -> None:
    return None


OPTIONS: dict[str, dict[str, ValueFn]] = {
    "plan": {
        "--disks": lambda b: b.number(["1", "6", "12", "24", "97", "1024"]), "--disk-size": lambda b: b.size(), "--vdev-bytes": lambda b: b.size(),
        "--layouts": lambda b: b.layouts(), "--no-spares": _flag, "--no-draid": _flag,
        "--ashift": lambda b: b.number(ASHIFTS), "--zfs-version": lambda b: b.maybe_hostile(lambda: b.c.pick(VERSIONS)),
        "--sector-size": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--sector-size"])), **_risk_options(),
        "--no-risk": _flag, "--disk-model": lambda b: b.disk_model(),
        "--recordsize": lambda b: b.maybe_hostile(lambda: b.c.pick(RECORDSIZES)), "--no-speed": _flag,
        "--priority": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--priority"])),
        "--min-usable": lambda b: b.size(), "--min-failures": lambda b: b.number(["0", "1", "2", "3"]), "--json": _flag,
        "--csv": _flag,
        "--data-from": lambda b: b.tree() if b.c.integer(0, 1) else b.footprint_json(),
        "--grow": lambda b: b.maybe_hostile(lambda: b.c.pick(["50%", "0%", "50", "100%", "1000%", "-5%"])),
    },
    "capacity": {
        "--vdev-bytes": lambda b: b.size(), "--disk-size": lambda b: b.size(), "--ashift": lambda b: b.number(ASHIFTS),
        "--zfs-version": lambda b: b.maybe_hostile(lambda: b.c.pick(VERSIONS)),
        "--created-with": lambda b: b.maybe_hostile(lambda: b.c.pick(VERSIONS)),
        "--sector-size": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--sector-size"])),
        "--recordsize": lambda b: b.maybe_hostile(lambda: b.c.pick(RECORDSIZES)), "--file-size": lambda b: b.size(),
        "--json": _flag,
    },
    "special-size": {
        "--format": lambda b: b.maybe_hostile(lambda: b.c.pick(["auto", "sizes", "csv", "zdb"])),
        "--special-small-blocks": lambda b: b.maybe_hostile(lambda: b.c.pick(["0", "4K", "16K", "64K", "1M", "3K", "16M"])),
        "--recordsize": lambda b: b.maybe_hostile(lambda: b.c.pick(RECORDSIZES)), "--ashift": lambda b: b.number(ASHIFTS),
        "--special-layout": lambda b: b.maybe_hostile(lambda: b.c.pick(["mirror:2", "mirror:3", "mirror:4"])),
        "--compression": lambda b: b.maybe_hostile(lambda: b.c.pick(["off", "lz4-ratio 1.5", "lz4-ratio 0.5", "lz4"])),
        "--growth": lambda b: b.number(["0", "50", "100", "10000", "10001"]),
        "--files-per-dir": lambda b: b.number(["1", "1000", "1000000000", "0"]), "--json": _flag,
    },
    "expand": {
        "--add": lambda b: b.number(["1", "2", "3", "249", "250", "0"]), "--disk-size": lambda b: b.size(),
        "--vdev-bytes": lambda b: b.size(), "--fill-before": lambda b: b.number(["0", "0.5", "1", "1.5"]),
        "--written": lambda b: b.size(), "--recordsize": lambda b: b.maybe_hostile(lambda: b.c.pick(RECORDSIZES)),
        "--rewrite": _flag, "--ashift": lambda b: b.number(ASHIFTS),
        "--zfs-version": lambda b: b.maybe_hostile(lambda: b.c.pick(VERSIONS + ["2.3.9", "2.4.4", "2.3.2", "2.2"])),
        "--sector-size": lambda b: b.maybe_hostile(lambda: b.c.pick(["512", "4096", "1024"])), "--json": _flag,
    },
    "risk": {
        "--disk-size": lambda b: b.size(), **_risk_options(), "--spares": lambda b: b.number(["0", "1", "2", "100"]),
        "--model": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--model"])),
        "--engine": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--engine"])),
        "--trials": lambda b: b.number(["100", "1000", "20000"]), "--target-error": lambda b: b.number(["0.1", "0.001", "1", "0.5"]),
        "--max-trials": lambda b: b.number(["100", "5000", "100000000"]),
        "--seed": lambda b: b.number(["0", "1", "42", "9223372036854775807"]), "--weibull-shape": lambda b: b.number(["0.5", "1", "2", "0.1", "20"]),
        "--afr-by-age": lambda b: b.years(), "--batch-variance": lambda b: b.number(["0", "0.5", "10"]), "--exponential-repair": _flag,
        "--ashift": lambda b: b.number(ASHIFTS), "--json": _flag,
    },
    "layout": {
        "--from-zpool": lambda b: b.vdevs(), "--devices": lambda b: b.devices(),
        "--pool": lambda b: b.maybe_hostile(lambda: b.c.pick(POOLS)), "--ashift": lambda b: b.number(ASHIFTS),
        "--json": _flag,
    },
    "validate": {"--ashift": lambda b: b.number(ASHIFTS), "--json": _flag},
    "report": {
        "--db": lambda b: b.db(), "--plan": lambda b: b.maybe_hostile(lambda: b.c.pick(DISK_SETS)),
        "--html": lambda b: b.output(), "--charts": lambda b: b.output(),
        "--chart-format": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--chart-format"])),
        "--disk-model": lambda b: b.disk_model(),
        "--priority": lambda b: b.maybe_hostile(lambda: b.c.pick(CHOICES["--priority"])),
        "--min-usable": lambda b: b.size(), "--min-failures": lambda b: b.number(["0", "1", "2", "3"]),
        "--ashift": lambda b: b.number(ASHIFTS),
        "--zfs-version": lambda b: b.maybe_hostile(lambda: b.c.pick(VERSIONS)), **_risk_options(),
        "--json": _flag, "--csv": _flag,
    },
    # bench and drill: --dry-run, the disks (or --sandbox) and --db are added by command_line
    "bench": {
        "--sandbox-size": lambda b: b.size() if b.c.integer(0, 1) else b.maybe_hostile(
            lambda: b.c.pick(["64MiB", "1GiB", "63MiB", "16TiB", "17TiB"])),
        "--sandbox-disks": lambda b: b.number(["1", "2", "6", "8", "64", "65"]),
        "--ashift": lambda b: b.number(ASHIFTS), "--wipe": _flag,
        "--confirm-serials": lambda b: b.maybe_hostile(lambda: b.c.pick(["S1,S2", "", "WD-1"])),
        "--layouts": lambda b: b.layouts(), "--all": _flag, "--suite": lambda b: b.suite(),
        "--repeats": lambda b: b.number(["1", "3", "100", "101"]),
        "--recordsize": lambda b: b.maybe_hostile(lambda: b.c.pick(RECORDSIZES)),
        "--compression": lambda b: b.maybe_hostile(lambda: b.c.pick(["off", "lz4"])),
        "--size": lambda b: b.maybe_hostile(lambda: b.c.pick(FIO_SIZES)),
        "--runtime": lambda b: b.number(["1", "10", "60", "86400", "86401"]),
        "--ramp": lambda b: b.number(["0", "2", "10", "3600", "3601"]), "--json": _flag,
    },
    "drill": {
        "--sandbox-size": lambda b: b.size() if b.c.integer(0, 1) else b.maybe_hostile(
            lambda: b.c.pick(["64MiB", "1GiB", "63MiB", "16TiB", "17TiB"])),
        "--ashift": lambda b: b.number(ASHIFTS), "--wipe": _flag,
        "--confirm-serials": lambda b: b.maybe_hostile(lambda: b.c.pick(["S1,S2", "", "WD-1"])),
        "--layout": lambda b: b.layout(), "--sequential-rebuild": _flag,
        "--fill": lambda b: b.number(["0.5", "0.01", "0.9", "0.91", "0.2"]),
        "--scenarios": lambda b: b.maybe_hostile(lambda: b.c.pick(SCENARIO_SETS)),
        "--corrupt-mb": lambda b: b.number(["1", "4", "32", "33"]), "--json": _flag,
    },
    "footprint": {
        "--layouts": lambda b: b.layouts(), "--disks": lambda b: b.maybe_hostile(lambda: b.c.pick(DISK_SETS)),
        "--disk-size": lambda b: b.size(),
        "--compression": lambda b: b.maybe_hostile(lambda: b.c.pick(["off", "lz4", "zstd", "zstd-19", "gzip-9",
                                                                     "zstd-20", "gzip-0", "LZ4", "zle", "zstd-²",
                                                                     "zstd-" + "9" * 5000, "gzip-" + "1" * 4301])),
        "--recordsize": lambda b: b.maybe_hostile(lambda: b.c.pick(RECORDSIZES)), "--ashift": lambda b: b.number(ASHIFTS),
        "--zfs-version": lambda b: b.maybe_hostile(lambda: b.c.pick(VERSIONS)),
        "--sample": lambda b: b.maybe_hostile(lambda: b.c.pick(["1MB", "0", "1s", "0.1s", "10GB", "-1s", "1e400s"])),
        "--seed": lambda b: b.number(["1", "0", "9223372036854775807"]), "--json": _flag,
        "--special-small-blocks": lambda b: b.c.pick(["0", "64K", "512", "16M", "96K", "32M", "-1", "1e400"]),
    },
    # merge: its inputs are databases made (and damaged) here; -o is added by command_line mostly
    "merge": {"-o": lambda b: b.output(), "--json": _flag},
    # profile-disk: only options whose values can never be taken for the device
    "profile-disk": {"--seconds": lambda b: b.c.pick(["1", "0", "-1", "3601", "²", "nan", ""]),
                     "--write-tests": _flag, "--output": lambda b: b.output(), "--json": _flag},
}


def positionals(b: Builder, command: str) -> list[str]:
    if command == "plan":
        return [b.maybe_hostile(lambda: b.c.pick(DISK_SETS))] if b.c.integer(0, 2) else []
    if command in ("capacity", "risk", "expand"):
        return [b.layout()]
    if command == "special-size":
        return [b.file_sizes()]
    if command == "layout":
        return [b.layout()] if b.c.integer(0, 4) else []
    if command == "validate":
        return [b.dataset()]
    if command == "profile-disk":
        return [b.device()]
    if command == "footprint":
        return [b.tree() for _ in range(b.c.pick([1, 1, 1, 2]))]
    if command == "merge":
        return [b.db() for _ in range(b.c.pick([1, 2, 2, 3]))]
    return []


def issue_38_line(c: Chooser, workdir: str) -> Case:
    """One command line of the classes issue 38 found unbounded: a saved footprint's numbers and
    depth, merge's inputs (WAL, damaged) and -o, footprint's compression level, fleets named by
    --hosts or an inventory (refused before ssh), a results file holding 1e308."""
    b = Builder(c, workdir)
    what = c.integer(0, 9)
    if what >= 8:   # item 8: footprint and plan --data-from on a tree of 1 TB to 8 TiB sparse files
        tree = b.sparse_tree()
        if what == 8:
            options = c.pick([["--sample", "1s", "--recordsize", "4K"]] * 5 + [
                              [], ["--recordsize", "4K"], ["--sparse", "fill"],
                              ["--sparse", "fill", "--compression", "off"],
                              ["--sample", "10GB", "--recordsize", "4K"], ["--sample", "1s", "--sparse", "fill"],
                              ["--layouts", "raidz2:6,mirror:2", "--recordsize", "1M"]])
            argv = ["footprint", tree, *options] + (["--json"] if c.integer(0, 1) else [])
            sample = options[:4] == ["--sample", "1s", "--recordsize", "4K"]
            tag = "sparse-sample" if sample else "sparse-footprint"
        else:
            argv = ["plan", c.pick(["6x4TB", "24x4TB", "4x100MB"]), "--data-from", tree]
            argv += c.pick([[], ["--json"], ["--recordsize", "4K"], ["--no-risk", "--no-speed"], ["--grow", "50%"]])
            tag = "sparse-plan"
        if b.big_sparse >= TB:
            b.tags.append(tag)
        if tag == "sparse-sample" and b.big_sparse in (TB, 1 << 40):
            b.tags.append("sparse-1TB-sample")
        if b.scattered and "--sample" in argv and b.big_sparse >= TB:
            b.tags.append("sparse-scattered")
        return Case(argv, workdir, b.outputs, b.tags)
    if what == 0:
        argv = ["plan", c.pick(["6x4TB", "24x4TB", "4x100MB"]), "--data-from", b.footprint_json()]
        argv += c.pick([[], ["--json"], ["--grow", "50%"], ["--no-risk", "--no-speed"]])
    elif what == 1:
        argv = ["merge", *[b.db() for _ in range(c.pick([1, 2, 3]))], "-o", b.output()]
        argv += ["--json"] if c.integer(0, 3) == 0 else []
    elif what == 2:
        argv = ["footprint", b.tree(), "--compression", c.pick(["zstd-" + "9" * 5000, "gzip-" + "1" * 4301, "zstd-²",
                                                              "gzip-٣", "zstd-19", "gzip-1", "zstd-0", "zstd-"])]
    elif what == 3:
        argv = ["plan", "6x4TB", "--db", b.db()] if c.integer(0, 1) else ["report", "--db", b.db(), "--json"]
    else:   # 4, 5: a fleet by --hosts or any inventory; 6, 7: an inventory of items 5-7 at the issue's sizes
        command = c.pick(DISK_COMMANDS)
        argv = [command, "--dry-run"]
        if what >= 6:
            argv += ["--inventory", b.inventory(issue_sizes=True)]
        else:
            argv += ["--hosts", b.hosts_value()] if c.integer(0, 1) else ["--inventory", b.inventory()]
        if c.integer(0, 2) == 0:
            argv += ["--group", b.maybe_hostile(lambda: c.pick(["all", "g0", "g", "s1", "nope"]))]
        argv += ["--disks", c.pick(["", ",", " , "]), "--db", b.path("new.sqlite")]   # no disks: refused
    return Case(argv, workdir, b.outputs, b.tags)


def command_line(c: Chooser, workdir: str) -> Case:
    """One hostile command line of one of COMMANDS, with its input files made in workdir."""
    if c.integer(0, 7) == 0:
        return issue_38_line(c, workdir)
    b = Builder(c, workdir)
    command = c.pick(COMMANDS)
    argv = [command, *positionals(b, command)]
    if command in DISK_COMMANDS:  # a dry run, whatever follows; its disks and files in the run's folder
        argv.append("--dry-run")
        source = c.integer(0, 19)
        if source <= 13 or source == 16:
            argv += ["--sandbox", b.sandbox()]
        if 14 <= source <= 16:  # 16: both, which argparse refuses
            argv += ["--disks", b.disks()]
            if command == "drill" and c.integer(0, 1):
                argv += ["--spare-disk", b.disk()]
        if source >= 17 and command == "drill" and c.integer(0, 2):  # an existing pool: no plan to print
            argv += ["--pool", b.maybe_hostile(lambda: c.pick(POOLS))] + (["--read-only"] if c.integer(0, 3) else [])
        # a new database most of the time: the plan is printed only after the database is read
        argv += ["--db", b.db() if c.integer(0, 2) == 0 else b.path("new.sqlite")]
    table = OPTIONS[command]
    names = list(table)
    for _ in range(c.integer(0, 6)):
        name = c.pick(names)
        if command == "layout" and name == "--from-zpool" and len(argv) > 1 and c.integer(0, 3):
            continue  # the positional layout excludes it: mostly draw something that can run
        value = table[name](b)
        argv += [name] if value is None else [name, value]
    if command == "risk":
        # a Monte Carlo run stops at --max-seconds (default 5): keep examples short, hostile values included
        argv += ["--max-seconds", b.maybe_hostile(lambda: c.pick(["0.1", "0.3", "1"]))]
    if command in ("capacity", "risk", "expand") and c.integer(0, 4):
        argv += ["--disk-size", b.size()]
    if command == "expand" and c.integer(0, 5):
        argv += ["--add", b.number(["1", "2", "3"])]
    if command == "merge" and c.integer(0, 5):
        argv += ["-o", b.output()]
    if command == "report" and c.integer(0, 3):
        name = c.pick(["--json", "--csv", "--html", "--charts"])
        value = table[name](b)
        argv += [name] if value is None else [name, value]
    if command not in ("profile-disk", *DISK_COMMANDS) and c.integer(0, 9) == 0:
        argv.insert(c.integer(1, len(argv)), b.hostile())  # a stray word anywhere
    return Case(argv, workdir, b.outputs, b.tags)


def check_safe(case: Case) -> None:
    """Refuse to run a command line that could touch a disk: the rule the generator keeps."""
    import contextlib
    import io

    from zfslab.cli import build_parser
    if case.argv[0] == "pool":   # only ever on a capture copied into the run's folder, never a host
        assert case.capture is not None and os.path.realpath(case.capture) == os.path.join(
            os.path.realpath(case.workdir), CAPTURE), case.argv
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                args = build_parser().parse_args(case.argv)
        except (Exception, SystemExit):  # noqa: BLE001 - it will not parse, so it will not run
            return
        assert args.hosts is None and args.inventory is None, case.argv
        return
    assert case.argv[0] in COMMANDS, case.argv
    if case.argv[0] not in ("profile-disk", *DISK_COMMANDS):
        return
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            args = build_parser().parse_args(case.argv)
    except (Exception, SystemExit):  # noqa: BLE001 - it will not parse (or only shows help), so it will not run
        return
    if case.argv[0] == "profile-disk":
        _assert_inside(case.workdir, args.device)
        assert not os.path.exists(args.device) or os.path.isfile(args.device), args.device
        return
    assert args.dry_run, case.argv
    _assert_inside(case.workdir, args.db)
    if getattr(args, "hosts", None) is not None or getattr(args, "inventory", None) is not None:
        # a fleet: never one that could reach ssh. Its --disks names none, which is refused before any
        # host is contacted, and any host it names is 127.0.0.1
        assert args.disks is not None and not args.disks.replace(",", "").strip(), case.argv
        try:
            from zfslab.commands._hosts import hosts_from_args
            with contextlib.redirect_stderr(io.StringIO()):
                hosts = hosts_from_args(args)
        except Exception:  # noqa: BLE001 - refused: no host at all
            hosts = ()
        assert all(h.destination == "127.0.0.1" for h in hosts or ()), case.argv
        return
    if args.sandbox is not None:
        _assert_inside(case.workdir, args.sandbox)
    for disk in [*(args.disks or "").split(","), getattr(args, "spare_disk", None) or ""]:
        if disk.strip():
            _assert_inside(case.workdir, disk.strip())


def _assert_inside(workdir: str, path: str) -> None:
    """`path` (relative to the run's folder, where the command runs) names an entry inside that
    folder, and no block device."""
    import stat
    joined = os.path.normpath(os.path.join(workdir, path))
    assert joined.startswith(os.path.normpath(workdir) + os.sep), path
    if "\x00" in joined:  # no system call takes it: it names nothing
        return
    real = os.path.realpath(joined)
    assert real.startswith(os.path.realpath(workdir) + os.sep), path
    assert not os.path.exists(real) or not stat.S_ISBLK(os.stat(real).st_mode), path


_DB_BYTES: bytes | None = None


def zfslab_db_bytes() -> bytes:
    """A small results database as bench and drill write it (made once, then copied)."""
    global _DB_BYTES
    if _DB_BYTES is None:
        from zfslab.store.schema import connect
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.sqlite")
            conn = connect(path)
            conn.execute("INSERT INTO runs (key, started_at, command, suite, repeats, options_json, sandbox, "
                         "zfs_version, kernel, cpu, ram_bytes) VALUES ('k', '2026-11-22T10:00:00', 'zfslab bench', "
                         "'quick', 1, '{}', 0, '2.1.11', '6.1.0', 'Xeon x2', 4294967296)")
            for i in range(4):
                conn.execute("INSERT INTO run_disks VALUES (1, ?, ?, ?, 'WD', 4000787030016, 1)",
                             (i, f"/dev/sd{'abcd'[i]}", f"S{i}"))
            for layout, w, r in (("2xmirror:2", 400.0, 700.0), ("raidz1:4", 600.0, 650.0)):
                for test, wv, rv in (("seqwrite", w, None), ("seqread", None, r)):
                    conn.execute("INSERT INTO measurements (run_id, layout, test, repeat, started_at, seconds, "
                                 "read_mb_s, write_mb_s, read_iops, write_iops, fio_json) "
                                 "VALUES (1, ?, ?, 1, 'now', 10, ?, ?, 0, 0, '{}')", (layout, test, rv, wv))
            conn.execute("INSERT INTO drills (layout, scenario, started_at, seconds, outcome, verdict, data_json) "
                         "VALUES ('raidz1:4', 'degraded', 'now', 12, 'survived', 'survived 1 failed disk', '{}')")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode = DELETE")
            conn.close()
            with open(path, "rb") as f:
                _DB_BYTES = f.read()
    return _DB_BYTES


def snapshot(folder: str) -> dict[str, Any]:
    """Every entry under folder: a file's bytes hash, a folder's mark, a FIFO's mark."""
    import hashlib
    import stat as st
    out: dict[str, Any] = {}
    for root, dirs, files in os.walk(folder):
        for d in dirs:
            out[os.path.join(root, d)] = "dir"
        for f in files:
            p = os.path.join(root, f)
            mode = os.lstat(p).st_mode
            if st.S_ISREG(mode):
                out[p] = _file_digest(p)
            else:
                out[p] = f"mode {mode:o}"
    return out


def _file_digest(path: str) -> str:
    """A regular file's size and the bytes of its data extents (SEEK_DATA/SEEK_HOLE), never its
    holes: issue 38's trees hold sparse files of 1 to 8 TB, whose holes a whole read would take
    hours to hash. A file system without holes gives one extent, the whole file."""
    import hashlib
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        h.update(f"{size}:".encode())
        pos = 0
        while pos < size:
            try:
                start = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError as e:   # ENXIO: only a hole from pos to the end
                if e.errno == errno.ENXIO:
                    break
                raise
            end = os.lseek(fd, start, os.SEEK_HOLE)
            h.update(f"{start}-{end}:".encode())
            while start < end:
                chunk = os.pread(fd, min(end - start, 1 << 20), start)
                if not chunk:
                    break
                h.update(chunk)
                start += len(chunk)
            pos = end
    finally:
        os.close(fd)
    return h.hexdigest()


def changed_outside_outputs(before: dict[str, Any], after: dict[str, Any], outputs: list[str]) -> list[str]:
    """Entries created, changed or removed that are not one of the outputs (or inside an output folder)."""
    folders = [os.path.normpath(o) for o in outputs]

    def allowed(path: str) -> bool:
        return any(path == o or path.startswith(o + os.sep) for o in folders)
    changed = [p for p in set(before) | set(after) if before.get(p) != after.get(p)]
    return sorted(p for p in changed if not allowed(p))


# --- `zfslab pool` on captured pools (--focus pool) ------------------------------------------------
# The pool command reads a live pool through the one runner (system/live_pool.py read_pool). A pool
# line copies one of the guest's captures (tests/data/pools) into the run's own folder, damages it
# there, and the run answers each command read_pool runs with that copy's file (install_capture):
# no program starts, and nothing outside the run's folder is read but tests/data and /proc/meminfo.
POOL_SERIES = ("zfs-2.3", "zfs-2.4")
CAPTURE = "capture"   # the copy's folder, inside the run's folder
CAPTURED_AS = {  # read_pool's argv, the pool named POOL, and the captured file that answers it
    "zpool list -H -o name": "names.txt",
    "zfs version": "zfs_version.txt",
    "zpool get -Hp ashift,psize POOL all-vdevs": "zpool_get_vdevs_Hp.txt",
    "zpool status -D -j -P --json-int POOL": "zpool_status_jP.json",
    "zpool get -j --json-int all POOL": "zpool_get_j.json",
    "zfs get -j --json-int all POOL": "zfs_get_j.json",
    "zfs get -j --json-int -r -t filesystem recordsize,compression,mountpoint POOL": "zfs_get_rj.json",
    "zpool status -D -P -p POOL": "zpool_status_Pp.txt",
    "zpool list -vHPp POOL": "zpool_list_vHPp.txt",
    "zpool get -Hp all POOL": "zpool_get_Hp.txt",
    "zfs get -Hp all POOL": "zfs_get_Hp.txt",
    "zfs get -Hp -r -t filesystem recordsize,compression,mountpoint POOL": "zfs_get_rHp.txt",
    "zpool history POOL": "zpool_history.txt",
}
JSON_FILES = ("zpool_status_jP.json", "zpool_get_j.json", "zfs_get_j.json", "zfs_get_rj.json")
TEXT_FILES = ("zpool_status_Pp.txt", "zpool_list_vHPp.txt", "zpool_get_Hp.txt", "zfs_get_Hp.txt", "zfs_get_rHp.txt",
              "zpool_get_vdevs_Hp.txt", "zpool_history.txt", "zfs_version.txt")
# values a damaged capture holds where a number, a name or a subtree was
JSON_VALUES: list[Any] = [float("nan"), float("inf"), float("-inf"), -1, 0, 1, 10**30, 2**64, 2**63, 1e308, -1e308,
                          0.5, "x", "", "NaN", "-1", "9" * 400, None, [], {}, True, False]
VDEV_TYPES = ["raidz9", "draid", "draid9:0d:1c:5s", "unknown", "", "root", "mirror", "raidz", "spare", "dspare",
              "replacing", "hole", "indirect", "missing", "disk", "file", "RAIDZ", "l2cache"]
DRAID_NAMES = ["draid2:1d:3c:0s-0", "draid1:2d:6c:9s-0", "draid:0d:0c:0s-0", "draid3:200d:2c:1s-0",
               "draid1:2d:255c:1s-0", "draid0:1d:1c:0s-0", "draid1:2d:6c:1s", "draid1:2d:6c-0", "draid2:4d:4c:0s-0",
               "draid1:" + "9" * 50 + "d:6c:1s-0", "draid1:²d:6c:1s-0", "raidz2-0", "raidz0-0", "raidz4-0",
               "mirror-0", "spare-0", "draid1-0-0"]
POOL_ADD = ["2x4TB", "4x12TB", "1x2GB", "3x2GiB", "1x4TB", "6x1TB", "8x16TB", "2x1GB", "1x64MiB", "1x3GB", "4x2GB",
            "1x1GB", "2x2GiB", "1x16TB", "5x2GB", "12x2GB", "2x4TB,1x8TB"]
POOL_ADD_ODD = ["1024x4TB", "1025x4TB", "0x4TB", "1x1B", "1x63MiB", "2x4", "2x500", "+1", "+1x4TB", "1 disk",
                "2x4TB+2x8TB", "1x16EiB", "1x18446744073709551616", "99999x4TB", "1" * 4301 + "x4TB", "1x1e400TB",
                "1xnanTB", "1xinfTB", "1x-4TB", "²x4TB", "2x٤TB", "1x1PB", "1000x1EB"]
POOL_REPLACE = ["4TB", "16TB", "2GB", "3GiB", "1GB", "2.5GiB", "8TB", "4GB", "20TB", "1PB"]
POOL_REPLACE_ODD = ["1B", "0", "0TB", "-4TB", "1EB", "16EiB", "18446744073709551616", "1e400TB", "nanTB", "infTB", "4",
                    "500", "1000PB", "9" * 30 + "TB", "64MiB", "1.9GiB", "2GiB"]
POOL_DATA = ["scratch", "media", "backup", "home", "business", "archive"]
POOL_WORKLOADS = ["general", "bulk", "backup", "vm"]
POOL_ODD_WORDS = ["critical", "HOME", "Home ", "", "database", "VM", " vm", "bulk\n"]


def pool_captures(series: str) -> list[str]:
    """The captured pools of one series (each a folder holding zpool_status_jP.json)."""
    folder = os.path.join(DATA, "pools", series)
    return sorted(n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n, "zpool_status_jP.json")))


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def _json_slots(node: Any, out: list[tuple[Any, Any]]) -> None:
    """Every (container, key) of a parsed JSON tree, the containers' own slots first."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in list(items):
        out.append((node, key))
        _json_slots(value, out)


def _vdev_nodes(node: Any, out: list[dict]) -> None:
    if isinstance(node, dict):
        if isinstance(node.get("vdevs"), dict):
            out.append(node)
        for value in node.values():
            _vdev_nodes(value, out)


EXTREME_NUMBERS: list[Any] = [0, -1, 1, 2**64 - 1, 2**64, 2**63, 10**30, 1e308, float("nan"), float("inf"), 0.5, 1e-300,
                              "0", "-1", "18446744073709551615", "1e400", "nan", "4.5", " 7", "0x10"]
RECORDSIZE_VALUES: list[Any] = [0, 1, 512, 4096, 8192, 131072, 1048576, 16777216, 33554432, -1, 2**64, "128K", "nan",
                                "", None, 1.5]
COMPRESSION_VALUES: list[Any] = ["off", "lz4", "zstd-19", "gzip-9", "zle", "on", "bogus", "", 0, None, "zstd-" + "9" * 40]


def _datasets_damage(c: Chooser, data: Any) -> bool:
    """Child filesystems of odd recordsize and compression (per-dataset recordsize advice); False when
    `data` holds no datasets."""
    datasets = data.get("datasets") if isinstance(data, dict) else None
    if not isinstance(datasets, dict) or not datasets:
        return False
    root = next(iter(datasets))
    entry = datasets[root]
    for i in range(c.pick([1, 1, 2, 5, 400])):
        child = __import__("json").loads(__import__("json").dumps(entry))
        name = c.pick([f"{root}/c{i}", f"{root}/c{i}/d", f"{root}/[c{i}]", f"{root}/ä{i}", f"other/c{i}", root + "/"])
        if isinstance(child, dict):
            child["name"] = name
            props = child.setdefault("properties", {})
            if isinstance(props, dict):
                props["recordsize"] = {"value": c.pick(RECORDSIZE_VALUES), "source": {"type": "LOCAL", "data": "-"}}
                props["compression"] = {"value": c.pick(COMPRESSION_VALUES), "source": {"type": "LOCAL", "data": "-"}}
                props["mountpoint"] = {"value": c.pick([f"/{name}", "none", "legacy", "-", "", "/"]),
                                       "source": {"type": "DEFAULT", "data": "-"}}
        datasets[name] = child
    return True


def damage_json(c: Chooser, text: bytes) -> bytes:
    """One hostile change to a JSON capture: a value replaced, a key gone, an unknown vdev type, an odd
    dRAID name, an empty or a doubled vdev (disks of another size), a number at an extreme, child
    datasets of odd recordsize, or the text cut short."""
    how = c.integer(0, 10)
    if how == 0:
        return text[:c.integer(0, len(text))]
    try:
        data = __import__("json").loads(text)
    except ValueError:
        return text
    slots: list[tuple[Any, Any]] = []
    _json_slots(data, slots)
    if not slots:
        return text
    parents: list[dict] = []
    _vdev_nodes(data, parents)
    if how == 1:
        container, key = c.pick(slots)
        del container[key]
    elif how == 2 and parents:   # a vdev type zfslab does not know
        node = c.pick([n for p in parents for n in p["vdevs"].values() if isinstance(n, dict)] or [{}])
        node["vdev_type"] = c.pick(VDEV_TYPES)
    elif how == 3 and parents:   # a dRAID (or other) name of odd geometry, type draid or not
        parent = c.pick(parents)
        if parent["vdevs"]:
            old = c.pick(sorted(parent["vdevs"]))
            node = parent["vdevs"].pop(old)
            new = c.pick(DRAID_NAMES)
            if isinstance(node, dict):
                node["name"] = new
                if c.integer(0, 1):
                    node["vdev_type"] = "draid"
            parent["vdevs"][new] = node
    elif how == 4 and parents:   # an empty pool, or a vdev with no children
        c.pick(parents)["vdevs"] = {}
    elif how == 5 and parents:   # a vdev doubled, its sizes scaled: disks of several sizes
        parent = c.pick(parents)
        if parent["vdevs"]:
            old = c.pick(sorted(parent["vdevs"]))
            twin = __import__("json").loads(__import__("json").dumps(parent["vdevs"][old]))
            scale = c.pick([2, 3, 0.5, 1000, 10**6, -1, 0])
            twin_slots: list[tuple[Any, Any]] = []
            _json_slots(twin, twin_slots)
            for container, key in twin_slots:
                value = container[key]
                if key in ("name", "path") and isinstance(value, str):
                    container[key] = value + "x"
                elif isinstance(value, int) and not isinstance(value, bool) and key not in ("vers_major", "vers_minor"):
                    container[key] = int(value * scale)
            parent["vdevs"][old + "x"] = twin
    elif how in (6, 7, 8):   # a number (or a number in a string) at an extreme: past the type checks
        numeric = [(n, k) for n, k in slots if isinstance(n[k], (int, float)) and not isinstance(n[k], bool)
                   or isinstance(n[k], str) and n[k].isdigit()]
        if numeric:
            container, key = c.pick(numeric)
            container[key] = c.pick(EXTREME_NUMBERS)
    elif how == 9 and _datasets_damage(c, data):
        pass
    else:
        container, key = c.pick(slots)
        container[key] = c.pick(JSON_VALUES)
    return __import__("json").dumps(data).encode()


def damage_text(c: Chooser, text: bytes) -> bytes:
    """One hostile change to a text capture: cut short, a number or a word replaced, a line gone or doubled."""
    lines = text.decode(errors="replace").splitlines(keepends=True)
    how = c.integer(0, 5)
    if how == 0 or not lines:
        return text[:c.integer(0, len(text))]
    i = c.integer(0, len(lines) - 1)
    if how == 1:
        del lines[i]
    elif how == 2:
        lines.insert(i, lines[i])
    else:
        import re
        words = [m for m in re.finditer(r"[^\s]+", lines[i])]
        if words:
            m = c.pick(words)
            if how == 3:
                new = c.pick(["nan", "inf", "-1", "0", "1e308", "9" * 40, "18446744073709551616", "-", "", "x", "4.5"])
            elif how == 4:
                new = c.pick(VDEV_TYPES + DRAID_NAMES + ["ONLINE", "DEGRADED", "FAULTED", "UNAVAIL"])
            else:
                new = c.pick(HOSTILE[:60])
            lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]
    return "".join(lines).encode(errors="surrogateescape")


def _leaves(status_json: bytes) -> list[str]:
    import re
    return sorted(set(re.findall(rb'"(/dev/[^"]+)"', status_json)))


def pool_capture(c: Chooser, workdir: str) -> tuple[str, str]:
    """(folder, pool name): one of the guest's captures copied into workdir/capture, damaged there."""
    series = c.pick(POOL_SERIES)
    name = c.pick(pool_captures(series))
    src = os.path.join(DATA, "pools", series, name)
    files: dict[str, bytes] = {}
    for f in sorted(set(CAPTURED_AS.values()) - {"names.txt", "zfs_version.txt"}):   # sorted: the same draws
        # in every process (a set's order follows the process's string hash seed)
        data = _read(os.path.join(src, f))
        if data is not None:
            files[f] = data
    # a capture made before zfs get -r was: the root's own properties stand for every filesystem's
    files.setdefault("zfs_get_rj.json", files.get("zfs_get_j.json", b"{}"))
    root_props = [line for line in files.get("zfs_get_Hp.txt", b"").splitlines(keepends=True)
                  if line.split(b"\t")[1:2] in ([b"recordsize"], [b"compression"], [b"mountpoint"])]
    files.setdefault("zfs_get_rHp.txt", b"".join(root_props))
    files.setdefault("zpool_history.txt", b"")
    files.setdefault("zpool_get_vdevs_Hp.txt", b"")
    name = next(iter(__import__("json").loads(files["zpool_status_jP.json"])["pools"]))  # sgrow_before holds sgrow
    version = c.pick([None] * 6 + ["2.2.7-1", "2.2.7-1", "2.1.11", "2.3.0", "2.4.0-rc1", c.pick(VERSIONS)])
    files["zfs_version.txt"] = (_read(os.path.join(DATA, "pools", series, "zfs_version.txt")) or b"") \
        if version is None else f"zfs-{version}\nzfs-kmod-{version}\n".encode()
    files["names.txt"] = (name + "\n" + c.pick(["", "", "\n", name + "\n"])).encode()
    lsblk, leaves = [], _leaves(files["zpool_status_jP.json"])
    odd_leaf = c.pick(leaves) if leaves and c.integer(0, 5) == 0 else None   # one disk's odd answer
    for leaf in leaves:
        odd = leaf == odd_leaf
        size = c.pick([0, -1, 1 << 70, "x", None, 1.5] if odd else [4000787030016, 2147483648, "4000787030016"])
        sector = c.pick([0, 3, 65536, 131072, None, -512] if odd else [512, 4096, 4096, "4096"])
        rota = c.pick([None, 2, "yes"] if odd else [True, False, 0, 1, "0", "1"])
        entry = {"path": leaf.decode(), "size": size, "phy-sec": sector, "rota": rota}
        lsblk.append(__import__("json").dumps({"blockdevices": [entry]}) + "\n")
    files["lsblk.txt"] = "".join(lsblk).encode()
    smart_dir = os.path.join(DATA, "smartctl")
    if c.integer(0, 2):
        files["smart.json"] = _read(os.path.join(smart_dir, c.pick(sorted(os.listdir(smart_dir))))) or b""
    text_path = version is not None and version.startswith(("2.1", "2.2"))
    targets = [f for f in files if f.endswith(".json")] + ["lsblk.txt"] if not text_path else \
        [f for f in TEXT_FILES if f in files] + ["lsblk.txt", *(["smart.json"] if "smart.json" in files else [])]
    for _ in range(c.pick([0, 0, 1, 1, 1, 2, 3])):
        f = c.pick(targets)
        if f == "lsblk.txt":
            lines = files[f].splitlines(keepends=True)
            if lines:
                i = c.integer(0, len(lines) - 1)
                lines[i] = damage_json(c, lines[i].rstrip(b"\n")) + b"\n"
                files[f] = b"".join(lines)
        elif f.endswith(".json"):
            files[f] = damage_json(c, files[f])
        else:
            files[f] = damage_text(c, files[f])
    folder = os.path.join(workdir, CAPTURE)
    os.mkdir(folder)   # new: no symlink can stand in its place
    for f, data in files.items():
        with open(os.path.join(folder, f), "xb") as out:
            out.write(data)
    return folder, name


def captured_answer(folder: str, argv: Sequence[str]):
    """The Completed run of argv as the capture in `folder` answers it: read_pool's commands from
    their files (pool name as the capture's), lsblk from lsblk.txt, smartctl -j -a from smart.json."""
    from zfslab.system.runner import Completed

    def text(name: str) -> str:
        with open(os.path.join(folder, name), "rb") as f:
            return f.read().decode(errors="replace")
    argv = tuple(str(a) for a in argv)
    names = text("names.txt").split()
    line = " ".join("POOL" if a in names else a for a in argv)
    if argv[0] == "lsblk":
        found = [x for x in text("lsblk.txt").splitlines() if f'"path": {__import__("json").dumps(argv[-1])}' in x]
        return Completed(argv, 0, (found or [""])[0], "", 0.0)
    if argv[:3] == ("smartctl", "-j", "-a"):
        return Completed(argv, 0, text("smart.json"), "", 0.0)
    if line in CAPTURED_AS and os.path.exists(os.path.join(folder, CAPTURED_AS[line])):
        return Completed(argv, 0, text(CAPTURED_AS[line]), "", 0.0)
    return Completed(argv, 1, "", f"not in the capture: {line}", 0.0)


def install_capture(folder: str):
    """Runner.which and Runner.run answer from the capture in `folder` (a forked run's own process,
    or undone by the callable returned): zpool, zfs and lsblk are there, smartctl when smart.json is."""
    from zfslab.system import runner as runner_module
    from zfslab.system.runner import CommandFailed, Runner
    saved = Runner.which, Runner.run

    def which(self, program):
        has = program in ("zpool", "zfs", "lsblk") or (program == "smartctl"
                                                       and os.path.exists(os.path.join(folder, "smart.json")))
        return f"/captured/{program}" if has else None

    def run(self, argv, *, timeout_s=600.0, check=True, input_text=None, cwd=None):
        done = captured_answer(folder, argv)
        if check and done.returncode != 0:
            raise CommandFailed(" ".join(done.argv), done.returncode, done.stderr)
        return done
    Runner.which, Runner.run = which, run

    def undo() -> None:
        Runner.which, Runner.run = saved
    del runner_module
    return undo


def pool_line(c: Chooser, workdir: str) -> Case:
    """`zfslab pool` on a damaged copy of a captured pool, with hostile --add, --replace-with, --data and
    --workload values now and then (the campaign's --focus pool)."""
    b = Builder(c, workdir)
    folder, name = pool_capture(c, workdir)
    argv = ["pool"] + ([name] if c.integer(0, 5) else [])
    def value(valid: list[str], odd: list[str]) -> str:   # odd now and then, hostile as the line's rate says
        return b.maybe_hostile(lambda: c.pick(odd if c.integer(0, 9) == 0 else valid))
    if c.integer(0, 2):
        argv += ["--add", value(POOL_ADD, POOL_ADD_ODD)]
    if c.integer(0, 2) == 0:
        argv += ["--replace-with", value(POOL_REPLACE, POOL_REPLACE_ODD)]
    if c.integer(0, 2) == 0:
        argv += ["--data", value(POOL_DATA, POOL_ODD_WORDS)]
    if c.integer(0, 2) == 0:
        argv += ["--workload", value(POOL_WORKLOADS, POOL_ODD_WORDS)]
    if c.integer(0, 1):
        argv.append("--json")
    if c.integer(0, 14) == 0:
        argv.insert(c.integer(1, len(argv)), b.hostile())  # a stray word anywhere
    return Case(argv, workdir, b.outputs, b.tags, capture=folder)
