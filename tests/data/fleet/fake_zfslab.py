"""A fake remote `zfslab` for tests/unit/test_fleet_bench.py: the real zfslab for every command but
bench, which it imitates without ZFS (this machine has no ZFS module): its key and resume, its
gate (a host whose disks hold data needs its serials), a pool file made at a layout's start and
removed at its end (a leftover one is adopted and removed, as the real bench destroys its own
pool, recorded in its run, and refused when its run did not record it, as the real gate does),
and measurements written through zfslab's store. FAKE_HOST names the host it plays; FAKE_DIR holds
the markers: dirty-HOST (its disks hold data), nodisk-HOST (its bench refuses the disks named, exit 2), die-HOST-LAYOUT (it dies mid-layout), die0-HOST-LAYOUT
(it dies after the pool's create, before the first measurement), dieI-HOST-LAYOUT (it dies between
the create and the pool's record: only the create's intent, recorded first, names the pool),
slow-HOST (each test takes the seconds it holds), hold-HOST (each test waits while it exists: a test
that must see the run still going holds it, then removes it). SIGTERM ends it as it ends the real bench: its
pool removed, its run left unfinished, exit 130."""

import argparse
import hashlib
import json
import os
import sys

from zfslab.cli import main

args = sys.argv[1:]
if args[:1] != ["bench"] or "--probe-detached" in args:   # a detached run's probe is zfslab's own
    sys.exit(main(args))

p = argparse.ArgumentParser()
for opt in ("--disks", "--layouts", "--db", "--origin", "--suite", "--repeats", "--ashift", "--recordsize",
            "--compression", "--size", "--runtime", "--ramp", "--confirm-serials"):
    p.add_argument(opt)
p.add_argument("--wipe", action="store_true")
p.add_argument("--dry-run", action="store_true")
p.add_argument("--stop-with-session", action="store_true")
a = p.parse_args(args[1:])
host, folder = os.environ["FAKE_HOST"], os.environ["FAKE_DIR"]
serial = f"SER-{host}"
if os.path.exists(os.path.join(folder, f"nodisk-{host}")):   # its zfslab refuses its input, as bench exits 2
    print(f"zfslab: error: --disks {a.disks}: no such disk on this host", file=sys.stderr)
    sys.exit(2)
if os.path.exists(os.path.join(folder, f"dirty-{host}")) and not (a.wipe and a.confirm_serials == serial):
    print(f"these disks would be refused (nothing was written):\n  {a.disks}: holds data, serial {serial}",
          file=sys.stderr)
    sys.exit(10)
from zfslab.store.results import Measurement, Results  # noqa: E402
from zfslab.store.schema import connect, open_readonly  # noqa: E402

from zfslab.system.suites import suite_tests  # noqa: E402

options = {"suite": a.suite, "tests": [t.name for t in suite_tests(a.suite)], "repeats": int(a.repeats), "ashift": int(a.ashift),
           "recordsize": a.recordsize, "compression": a.compression, "size": a.size, "runtime_s": int(a.runtime),
           "ramp_s": int(a.ramp)}
key = hashlib.sha256(json.dumps([a.layouts, a.disks, host, options]).encode()).hexdigest()[:16]
pool = os.path.join(folder, f"pool-{host}")
adopted = None
if os.path.exists(pool):   # the gate: a leftover pool is this run's only if its unfinished run recorded
    # its GUID, or the create's intent with the pool's mark (the real bench adopts that GUID first)
    _, guid, mark = open(pool).read().split()
    own, intents = set(), {}
    if os.path.exists(a.db):
        ro = Results(open_readonly(a.db))
        prior = ro.find_run(key)
        if prior is not None and prior["finished_at"] is None:
            own, intents = ro.pool_guids(run_id=prior["id"]), ro.intents(run_id=prior["id"])
        ro.conn.close()
    if guid not in own and ("zfslab-bench", mark) in intents:
        adopted = guid
    elif guid not in own:
        print(f"these disks would be refused (nothing was written):\n  {a.disks}: held by pool zfslab-bench "
              f"(GUID {guid}), which this run did not record", file=sys.stderr)
        sys.exit(10)
if a.dry_run:
    print(f"zpool create zfslab-bench {a.layouts} {a.disks}  # fake plan of {host}")
    sys.exit(0)

results = Results(connect(a.db))
run = results.find_run(key)
if run is None or run["finished_at"] is not None:
    run_id = results.start_run(key=key, command="fake", suite=a.suite, repeats=int(a.repeats), options=options,
                               sandbox=False, facts={"origin": a.origin, "hostname": "fake"},
                               disks=[{"device": d, "serial": f"{serial}-{i}", "size_bytes": 1 << 30}
                                      for i, d in enumerate(a.disks.split(","))])
else:
    run_id = run["id"]
if adopted is not None:
    results.record_pool(adopted, "zfslab-bench", "bench", a.layouts, run_id)
if os.path.exists(pool):
    print(f"zfslab: destroyed leftover pool of {open(pool).read()}", file=sys.stderr)
    os.unlink(pool)
guid, mark = f"{host}-{key}-{run_id}-{len(results.pool_guids(run_id=run_id))}", key
results.record_intent("zfslab-bench", "bench", a.layouts, mark, run_id)
with open(pool, "w") as f:
    f.write(f"{a.layouts} {guid} {mark}")
if os.path.exists(os.path.join(folder, f"dieI-{host}-{a.layouts}")):
    sys.exit(1)   # the host dies as zpool create returns: the pool is there, its GUID not recorded
results.record_pool(guid, "zfslab-bench", "bench", a.layouts, run_id)
if os.path.exists(os.path.join(folder, f"die0-{host}-{a.layouts}")):
    sys.exit(1)   # the host dies in its first test: the pool stays, the run has no measurement yet
from zfslab.model.bench_time import data_disks  # noqa: E402
from zfslab.model.layout_grammar import parse_layout  # noqa: E402

import signal  # noqa: E402
import time  # noqa: E402


def _stopped(signum, frame):
    if os.path.exists(pool):
        os.unlink(pool)
    sys.exit(130)


signal.signal(signal.SIGTERM, _stopped)
slow = os.path.join(folder, f"slow-{host}")
pause_s = float(open(slow).read()) if os.path.exists(slow) else 0.0
data = data_disks(parse_layout(a.layouts))
done = results.done(run_id)
for repeat in range(int(a.repeats)):
    for test, read in (("seqwrite", False), ("seqread", True)):
        if (a.layouts, test, repeat) in done:
            continue
        time.sleep(pause_s)
        while os.path.exists(os.path.join(folder, f"hold-{host}")):
            time.sleep(0.05)
        rate = 100.0 * data * (1.5 if read else 1.0)
        results.add(run_id, Measurement(a.layouts, test, repeat, 1.0, rate if read else None,
                                        None if read else rate, 0.0, 0.0, None, None, None, None, None,
                                        0.0, 0.0, 0.0, False, "{}", "{}", ""))
        if os.path.exists(os.path.join(folder, f"die-{host}-{a.layouts}")):
            sys.exit(1)   # the host dies here: the pool stays, the run unfinished
os.unlink(pool)
results.finish_run(run_id)
