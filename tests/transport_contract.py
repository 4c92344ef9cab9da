"""The Transport contract: what fleet runs rely on a transport to do, as test functions.

A test module imports these (`from tests.transport_contract import *`) and provides fixtures
`transport`, `host` (reachable) and `dead_host` (not). tests/unit/test_transport_local.py runs
them against LocalTransport; tests/unit/test_transport_ssh.py against SshTransport and a real
sshd on 127.0.0.1, so the in-process one cannot drift from what ssh does."""

import pytest

from zfslab.system.fanout import fan_out
from zfslab.system.transport import HostUnreachable, RemoteFailed, RemoteTimeout

__all__ = ["test_contract_argv_arrives_verbatim", "test_contract_exit_codes_and_errors_name_the_host",
           "test_contract_a_programs_own_255_is_not_a_dead_host", "test_contract_timeout",
           "test_contract_unreachable_host_is_named", "test_contract_parallel_commands_on_one_host",
           "test_contract_missing_program", "test_contract_fetch_copies_bytes",
           "test_contract_fetch_missing_file_and_dead_host"]

AWKWARD = ["a b", "it's", "$HOME", "`id`", ";", "*", "\\", "line\nbreak", "--", "-n", ""]


def test_contract_argv_arrives_verbatim(transport, host):
    done = transport.run(host, ["printf", "%s\\0", *AWKWARD], timeout_s=30)
    assert done.returncode == 0 and done.stdout.split("\0")[:-1] == AWKWARD


def test_contract_exit_codes_and_errors_name_the_host(transport, host):
    assert transport.run(host, ["sh", "-c", "exit 3"], timeout_s=30, check=False).returncode == 3
    with pytest.raises(RemoteFailed) as e:
        transport.run(host, ["sh", "-c", "echo boom >&2; exit 3"], timeout_s=30)
    assert str(e.value) == f"host {host.name}: `sh -c 'echo boom >&2; exit 3'` failed with exit code 3: boom"
    assert e.value.exit_code == 4


def test_contract_a_programs_own_255_is_not_a_dead_host(transport, host):
    assert transport.run(host, ["sh", "-c", "exit 255"], timeout_s=30, check=False).returncode == 255


def test_contract_timeout(transport, host):
    with pytest.raises(RemoteTimeout, match=rf"^host {host.name}: `sleep 30` did not finish within 0.5 s"):
        transport.run(host, ["sleep", "30"], timeout_s=0.5)


def test_contract_unreachable_host_is_named(transport, dead_host):
    with pytest.raises(HostUnreachable) as e:
        transport.run(dead_host, ["true"], timeout_s=30)
    assert str(e.value).startswith(f"host {dead_host.name}: cannot connect (") and e.value.exit_code == 4


def test_contract_parallel_commands_on_one_host(transport, host):
    outcomes = fan_out([host] * 1, lambda h: [transport.run(h, ["echo", str(i)], timeout_s=30).stdout
                                              for i in range(3)], limit=1)
    assert outcomes[0].ok and outcomes[0].value == ["0\n", "1\n", "2\n"]
    many = fan_out([host], lambda h: fan_out([h] * 6, lambda x: transport.run(x, ["echo", "x"], timeout_s=30).stdout,
                                            limit=3), limit=1)
    assert [o.value for o in many[0].value] == ["x\n"] * 6


def test_contract_missing_program(transport, host):
    with pytest.raises(RemoteFailed, match=rf"^host {host.name}: `no-such-program-zfslab` failed with exit code 127"):
        transport.run(host, ["no-such-program-zfslab"], timeout_s=30)


def test_contract_fetch_copies_bytes(transport, host, tmp_path):
    # every byte value, NUL and newlines included, under a name with a space and a quote
    data = bytes(range(256)) * 64 + b"\r\n\0end"
    remote = tmp_path / "remote dir" / "it's.sqlite"
    remote.parent.mkdir()
    remote.write_bytes(data)
    local = tmp_path / "local.sqlite"
    transport.fetch(host, str(remote), str(local), timeout_s=30)
    assert local.read_bytes() == data and remote.read_bytes() == data


def test_contract_fetch_missing_file_and_dead_host(transport, host, dead_host, tmp_path):
    with pytest.raises(RemoteFailed) as e:
        transport.fetch(host, str(tmp_path / "none.sqlite"), str(tmp_path / "out"), timeout_s=30)
    assert str(e.value).startswith(f"host {host.name}: `scp {tmp_path / 'none.sqlite'}` failed")
    assert not (tmp_path / "out").exists() or (tmp_path / "out").stat().st_size == 0
    with pytest.raises(HostUnreachable):
        transport.fetch(dead_host, str(tmp_path / "none.sqlite"), str(tmp_path / "out2"), timeout_s=30)
