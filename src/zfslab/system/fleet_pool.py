"""`pool --hosts`: every host's pools, read by the host's own `zfslab pool --json` over the fleet
transport (docs/pool.md#many-hosts). Read-only, as `zfslab pool` is; a host that cannot be
reached, or whose answer is not a pool report, is one line and the others are still shown."""

from __future__ import annotations

import json
from collections.abc import Sequence

from zfslab.errors import ZfslabError, clip, one_line
from zfslab.model.fleet_exit import HOST_FAILED
from zfslab.model.fleet_pool import FleetPools, RemoteFinding, RemotePool
from zfslab.model.inventory import Host
from zfslab.system.fanout import DEFAULT_LIMIT, fan_out
from zfslab.system.transport import RemoteFailed, Transport

TIMEOUT_S = 300.0   # zpool status of a pool of hundreds of disks, and a Python start, on a busy host
MAX_ANSWER_BYTES = 16 * 2**20
SEVERITIES = ("warning", "note")


class BadAnswer(ZfslabError):
    """A host's answer that is not `zfslab pool --json`'s."""


def _text(value, what: str, limit: int = 4000) -> str:
    if not isinstance(value, str) or len(value) > limit:
        raise BadAnswer(f"{what} is not a text: {clip(value, 60)}")
    return value


def parse_answer(host: str, stdout: str) -> list[RemotePool]:
    """The pools in one host's `zfslab pool --json`, each field checked."""
    if len(stdout) > MAX_ANSWER_BYTES:
        raise BadAnswer(f"its answer is over {MAX_ANSWER_BYTES // 2**20} MiB")
    try:
        data = json.loads(stdout)
    except (ValueError, RecursionError):
        raise BadAnswer(f"its answer is not JSON: {clip(stdout.strip(), 60)}") from None
    if not isinstance(data, dict) or not isinstance(data.get("pools"), list):
        raise BadAnswer("its answer has no list of pools")
    out = []
    for record in data["pools"]:
        if not isinstance(record, dict) or not isinstance(record.get("model"), dict) \
                or not isinstance(record.get("findings"), list):
            raise BadAnswer("a pool in its answer has no model or findings")
        agrees = record["model"].get("agrees")
        if agrees not in (True, False, None):
            raise BadAnswer(f"a pool's model.agrees is {clip(agrees, 20)}")
        findings = []
        for f in record["findings"]:
            if not isinstance(f, dict) or f.get("severity") not in SEVERITIES:
                raise BadAnswer("a finding in its answer has no severity")
            findings.append(RemoteFinding(_text(f.get("code"), "a finding's code", 64), f["severity"],
                                          _text(f.get("text"), "a finding's text")))
        out.append(RemotePool(host, _text(record.get("pool"), "a pool's name", 256),
                              _text(record.get("state"), "a pool's state", 32),
                              _text(record["model"].get("layout", ""), "a pool's layout", 512), agrees,
                              tuple(findings), record))
    return out


def remote_pool_argv(pools: Sequence[str]) -> list[str]:
    # `--` ends the options: a pool name the user typed is never read as one there
    return ["zfslab", "pool", "--json", "--", *pools]


def pools_fleet(transport: Transport, hosts: Sequence[Host], pools: Sequence[str] = (), *,
                limit: int = DEFAULT_LIMIT) -> FleetPools:
    """Every host's pools (the named ones, else every imported pool), read by the host's own zfslab."""

    def one(host: Host) -> list[RemotePool]:
        done = transport.run(host, remote_pool_argv(pools), timeout_s=TIMEOUT_S)
        return parse_answer(host.name, done.stdout)

    outcomes = fan_out(hosts, one, limit=limit, on_interrupt=transport.close)
    found: list[RemotePool] = []
    failures: list[str] = []
    codes: list[int] = []
    for o in outcomes:
        if o.ok:
            found += o.value
            codes.append(0)
            continue
        error = o.error
        failures.append(f"{o.host.name}: {one_line(str(error), 400)}")
        # the host's own exit code when its zfslab answered (a pool it does not have: 5 there), else 4
        codes.append(error.args[2] if isinstance(error, RemoteFailed) else HOST_FAILED)
    return FleetPools(tuple(found), tuple(failures), tuple(codes))
