"""`zfslab profile-disk`: measure one disk's speed with fio for the speed model.

Read-only by default (fio --readonly): streaming reads at the outer and inner zones and 4 KiB
random reads at QD1 and QD8 over the whole disk, not a short-stroked corner (docs/bench.md#profiles).
Write tests run only on a disk that passes the same emptiness checks as bench; without
them the write figures come from the preset of the disk's class, and the profile says so.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import tomllib
from dataclasses import asdict, replace

from zfslab.errors import InputError, ParamError, shown
from zfslab.model.disk_types import DiskType, failure_figures, from_profile
from zfslab.model.performance import PRESETS, DiskProfile, HostLimits
from zfslab.system.disks import DisksRefused, inspect_disk, refusal_lines
from zfslab.system.fio import Fio, FioJob
from zfslab.system.raidz_bench import KSTAT_PATH, read_raidz_bench
from zfslab.system.runner import Runner
from zfslab.system.text_files import read_text_file


def _read(fio: Fio, device: str, name: str, rw: str, bs: str, depth: int, seconds: int, offset: str = "0") -> float:
    job = FioJob(name, rw, bs=bs, size="10%" if rw == "read" else "100%", filename=device, iodepth=depth,
                 ioengine="libaio", direct=True, readonly=True, runtime_s=seconds, time_based=True,
                 extra=(("offset", offset),) if rw == "read" else ())
    r = fio.run(job, timeout_s=seconds * 4 + 120).jobs[0].read
    return r.mb_s if rw == "read" else r.iops


def host_limits(kstat_path: str = KSTAT_PATH) -> HostLimits:
    """This machine's parity speed from the loaded ZFS module (no limit known without one)."""
    bench = read_raidz_bench(kstat_path)
    if bench is None:
        return HostLimits()
    return HostLimits(parity_mb_s=bench.parity_mb_s(), cpus=os.cpu_count() or 1)


def profile_disk(device: str, *, seconds: int = 20, write_tests: bool = False, runner: Runner | None = None) -> DiskProfile:
    runner = runner or Runner()
    host = host_limits()
    info = inspect_disk(device, runner)
    fio = Fio(runner)
    preset = PRESETS["hdd7200" if info.rotational else "ssd"]
    outer = _read(fio, device, "outer", "read", "1m", 4, seconds)
    inner = _read(fio, device, "inner", "read", "1m", 4, seconds, offset="90%")
    qd1 = _read(fio, device, "rr1", "randread", "4k", 1, seconds)
    qd8 = _read(fio, device, "rr8", "randread", "4k", 8, seconds)
    today = datetime.date.today().isoformat()
    profile = replace(preset, name=info.model or info.device, seq_read_mb_s=outer, rand_read_iops_qd1=qd1,
                      rand_read_iops_qd8=qd8, inner_fraction=min(inner / outer, 1.0), host=host,
                      source=f"fio on {info.device} (serial {info.serial or '?'}) {today}; reads measured, "
                             f"writes from the {preset.name} preset")
    if not write_tests:
        return profile
    if not info.safe:
        raise DisksRefused("write tests need an empty disk; refusing:\n  " + "\n  ".join(refusal_lines([info])))
    write = fio.run(FioJob("sw", "write", bs="1m", size="10%", filename=device, iodepth=4, ioengine="libaio",
                           direct=True, runtime_s=seconds, time_based=True), timeout_s=seconds * 4 + 120).jobs[0].write
    rand = fio.run(FioJob("rw", "randwrite", bs="4k", size="100%", filename=device, iodepth=8, ioengine="libaio",
                          direct=True, runtime_s=seconds, time_based=True), timeout_s=seconds * 4 + 120).jobs[0].write
    sync = fio.run(FioJob("sync", "randwrite", bs="4k", size="100%", filename=device, fsync=1, runtime_s=seconds,
                          time_based=True), timeout_s=seconds * 4 + 120).jobs[0]
    sync_ms = (sync.write.clat_mean_ns + (sync.sync_mean_ns or 0.0)) / 1e6
    return replace(profile, seq_write_mb_s=write.mb_s, rand_write_iops=rand.iops, sync_write_ms=sync_ms,
                   source=f"fio on {info.device} (serial {info.serial or '?'}) {today}; reads and writes measured")


def profile_dict(p: DiskProfile) -> dict:
    """The profile for --json: an unknown (infinite) host limit is null, as JSON has no infinity."""

    def finite(v):
        if isinstance(v, dict):
            return {k: finite(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [finite(x) for x in v]
        return None if isinstance(v, float) and not math.isfinite(v) else v
    return finite(asdict(p))


class ProfileError(ValueError):
    """A disk profile's TOML that is not one: the message says what is wrong in it."""


PROFILE_REQUIRED = ("seq_read_mb_s", "seq_write_mb_s", "rand_read_iops_qd1", "rand_read_iops_qd8",
                    "rand_write_iops", "sync_write_ms")
HOST_KEYS = ("write_mb_s", "read_mb_s", "rewrite_parallel", "parity_mb_s", "cpus")


def profile_from_toml(text: str, name: str) -> DiskProfile:
    """The DiskProfile a profile's TOML describes (what profile_toml writes, or a hand-edited
    copy); `name` when it names none. ProfileError says what is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"not valid TOML ({str(e)[:80]})") from None
    except RecursionError:  # tomllib recurses into nested arrays
        raise ProfileError("nested too deeply to be a disk profile") from None
    fields = {k: data[k] for k in DiskProfile.__dataclass_fields__ if k in data and k != "host"}
    missing = [k for k in PROFILE_REQUIRED if k not in fields]
    if missing:
        raise ProfileError(f"missing {', '.join(missing)}")
    fields.setdefault("name", name)
    host = data.get("host", {})
    if not isinstance(host, dict):
        raise ProfileError("[host] must be a table")
    unknown = sorted(set(host) - set(HOST_KEYS))
    if unknown:
        raise ProfileError(f"[host] has unknown key {unknown[0]!r}: use write_mb_s, read_mb_s, parity_mb_s, cpus")
    if "parity_mb_s" in host:
        if not isinstance(host["parity_mb_s"], list):
            raise ProfileError("parity_mb_s must be a list of three rates")
        host = host | {"parity_mb_s": tuple(float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v
                                            for v in host["parity_mb_s"])}
    try:
        return DiskProfile(**fields, host=HostLimits(**host))
    except (TypeError, ValueError) as e:
        raise ProfileError(str(e)) from None


MAX_PROFILE_BYTES = 2**20


def read_disk_type(path: str) -> DiskType:
    """The disk type a PROFILE.toml describes: its speed, and its failure figures where it gives
    them (afr_pct, ber_per_bit). ParamError names the setting `disk_type`, the file and what is wrong."""
    if not os.path.exists(path):
        raise ParamError("disk_type", shown(path, 200),
                         f"no such file; `zfslab profile-disk DEV --output {shown(path)}` makes one")
    body = read_text_file(path, "disk_type", max_bytes=MAX_PROFILE_BYTES, kind="TOML")
    try:
        speed = profile_from_toml(body, path)
        afr, ber = failure_figures(tomllib.loads(body))   # valid TOML: profile_from_toml read it
    except (ProfileError, InputError) as e:
        raise ParamError("disk_type", shown(path, 200), shown(str(e), 120)) from None
    return from_profile(speed, afr=afr, ber_per_bit=ber)


def profile_toml(p: DiskProfile) -> str:
    def value(v):
        if isinstance(v, str):
            return json.dumps(v)  # a JSON string is a valid TOML basic string
        return repr(float(v)) if isinstance(v, float) else str(v)
    lines = ["# zfslab disk profile: zfslab plan --disk-model THIS_FILE"]
    for key in DiskProfile.__dataclass_fields__:
        v = getattr(p, key)
        if v is not None and key != "host":
            lines.append(f"{key} = {value(v)}")
    # TOML has no infinity in every reader's taste: an unknown limit is left out
    host = [f"{key} = {value(getattr(p.host, key))}" for key in ("write_mb_s", "read_mb_s")
            if math.isfinite(getattr(p.host, key))]
    if all(math.isfinite(v) for v in p.host.parity_mb_s):
        host += ["# data MB/s one core protects with raidz1, raidz2, raidz3 parity (/proc/spl/kstat/zfs/vdev_raidz_bench)",
                 f"parity_mb_s = [{', '.join(repr(round(v, 1)) for v in p.host.parity_mb_s)}]",
                 f"cpus = {p.host.cpus}"]
    if host:
        lines += ["", "[host]"] + host
    return "\n".join(lines) + "\n"
