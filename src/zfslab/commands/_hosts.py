"""The options that name the hosts of a fleet run, declared once for bench, profile-disk and drill
(docs/fleet.md#inventory): `--hosts`, or `--inventory FILE` and `--group`; `--skip-host`;
`--parallel`; `--ssh-config`, and the transport they make."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from zfslab.commands._common import int_arg
from zfslab.errors import UsageError, shown
from zfslab.model.inventory import Host, parse_hosts_option, parse_inventory
from zfslab.system.fanout import DEFAULT_LIMIT
from zfslab.system.text_files import read_text_file

MAX_INVENTORY_BYTES = 4 * 2**20


def add_host_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("many hosts (docs/fleet.md)")
    g.add_argument("--hosts", metavar="H,H,...", help="run on these hosts over ssh: names as ssh takes them, "
                                                      "e.g. st01,root@st02,st03:2222")
    g.add_argument("--inventory", metavar="FILE", help="an Ansible inventory (INI or YAML) naming the hosts")
    g.add_argument("--group", default="all", help="the inventory's group to run on (default all)")
    g.add_argument("--skip-host", action="append", default=[], metavar="H",
                   help="leave this host out (repeat for more), e.g. one preflight refused")
    g.add_argument("--parallel", type=int_arg("--parallel", 1, 1024), default=DEFAULT_LIMIT,
                   help=f"hosts worked on at once (default {DEFAULT_LIMIT}); new ssh logins stay at 10 at once "
                        "whatever this is (sshd's MaxStartups on a bastion)")
    g.add_argument("--ssh-config", metavar="FILE",
                   help="an ssh_config(5) file to use instead of ~/.ssh/config (ssh -F FILE)")
    g.add_argument("--remote-zfslab", metavar="PATH",
                   help="the zfslab program on every host, when ssh's PATH there finds none or another: an "
                        "absolute path, or one from the remote user's home (e.g. .local/bin/zfslab)")


def hosts_from_args(args: argparse.Namespace) -> tuple[Host, ...] | None:
    """The hosts the options name, --skip-host applied; None: this machine alone."""
    if args.hosts and args.inventory:
        raise UsageError("give --hosts or --inventory, not both")
    if args.group != "all" and not args.inventory:
        raise UsageError(f"--group {args.group}: goes with --inventory FILE")
    if args.hosts is not None:
        hosts = parse_hosts_option(args.hosts, "--hosts")
    elif args.inventory is not None:
        text = read_text_file(args.inventory, "--inventory", max_bytes=MAX_INVENTORY_BYTES, kind="inventory")
        hosts = parse_inventory(text, args.inventory, args.group)
    else:
        if args.skip_host:
            raise UsageError("--skip-host goes with --hosts or --inventory")
        return None
    left = set(skip_hosts([h.name for h in hosts], args.skip_host))
    return tuple(h for h in hosts if h.name in left)


def add_stop_with_session(p: argparse.ArgumentParser, command: str) -> None:
    """What a fleet controller passes to each host's own command: sshd sends a command without a
    terminal no hangup, so closing the session (the controller's Ctrl-C) would not stop it."""
    p.add_argument("--stop-with-session", action="store_true",
                   help=f"stop, as on Ctrl-C, when the program that started this {command} ends ({command} --hosts "
                        "passes it: the controller's Ctrl-C closes the ssh session, and so stops the host)")


def stop_with_session(args: argparse.Namespace) -> None:
    if args.stop_with_session:
        from zfslab.system.processes import stop_with_parent
        stop_with_parent()


def transport_from_args(args: argparse.Namespace):
    """The system's ssh, with the user's own configuration or the one --ssh-config names."""
    from zfslab.system.transport import SshTransport

    if args.ssh_config is not None and not os.path.isfile(args.ssh_config):
        raise UsageError(f"--ssh-config {shown(args.ssh_config, 200)}: no such file; give an ssh_config(5) file")
    path = remote_zfslab(args.remote_zfslab)
    transport = SshTransport(config_file=args.ssh_config)
    if path is None:
        return transport
    from zfslab.system.transport import RemoteZfslab  # deliberate lazy loading: as SshTransport above
    return RemoteZfslab(transport, path)


def remote_zfslab(text: str | None) -> str | None:
    """--remote-zfslab checked: the remote shell gets it quoted, so a '~' would not be expanded
    and is refused with the path that works (ssh runs the command in the user's home folder)."""
    if text is None:
        return None
    if not text.strip() or text != text.strip() or text.startswith("-") or "\n" in text or "\0" in text:
        raise UsageError(f"--remote-zfslab {shown(text, 200)}: give the path of zfslab on the hosts, e.g. "
                         "/usr/local/bin/zfslab")
    if text.startswith("~"):
        rest = text.removeprefix("~").lstrip("/")
        raise UsageError(f"--remote-zfslab {shown(text, 200)}: '~' reaches the host quoted, unexpanded; give "
                         f"{shown(rest or '.local/bin/zfslab', 200)} (from the remote user's home) or an absolute path")
    return text


def skip_hosts(hosts: Sequence[str], skip: Sequence[str]) -> list[str]:
    """The hosts left after --skip-host; a name that is not among them is a mistake, said so."""
    unknown = [s for s in skip if s not in hosts]
    if unknown:
        raise UsageError(f"--skip-host {shown(unknown[0], 60)}: not one of the hosts "
                         f"({shown(', '.join(hosts), 200)})")
    left = [h for h in hosts if h not in skip]
    if not left:
        raise UsageError("--skip-host drops every host; leave at least one")
    return left


def host_serials(values: Sequence[str] | None, hosts: Sequence[str]) -> dict[str, str]:
    """--confirm-serials with --hosts: HOST=S,S,... (repeatable), the typed consent of each host's
    disks, as its own zfslab takes it (`--confirm-serials S,S,...`); shared by bench and drill."""
    out: dict[str, list[str]] = {}
    for value in values or ():
        host, sep, serials = value.partition("=")
        host = host.strip()
        if not sep or not host:
            raise UsageError(f"--confirm-serials {shown(value, 60)}: with --hosts, name the host: HOST=S1,S2 "
                             "(repeat for each host whose disks hold data)")
        if host not in hosts:
            raise UsageError(f"--confirm-serials {shown(value, 60)}: {shown(host, 60)} is not one of the hosts "
                             f"({shown(', '.join(hosts), 200)})")
        found = [s.strip() for s in serials.split(",") if s.strip()]
        if not found:
            raise UsageError(f"--confirm-serials {shown(value, 60)}: no serial numbers after {shown(host, 60)}=")
        out.setdefault(host, []).extend(found)
    return {h: ",".join(s) for h, s in out.items()}
