"""An in-process fleet: each fake host answers argvs from a function, can be down, and can die
after a number of commands (a host that loses power mid-run). No process, no socket."""

from __future__ import annotations

import shlex
import threading
from collections.abc import Callable, Sequence

from zfslab.model.inventory import Host
from zfslab.system.runner import Completed
from zfslab.system.transport import HostUnreachable, RemoteFailed

Answer = tuple[int, str, str]   # exit code, stdout, stderr


class SimTransport:
    def __init__(self, answer: Callable[[str, list[str]], Answer], *, down: Sequence[str] = (),
                 die_after: dict[str, int] | None = None) -> None:
        """die_after[h] = k: host h carries out its k+1st command, then is gone before it answers
        (the work happened there, the controller never heard of it)."""
        self.answer = answer
        self.down = set(down)
        self.die_after = dict(die_after or {})
        self.calls: dict[str, int] = {}
        self.log: list[tuple[str, tuple[str, ...]]] = []
        self._lock = threading.Lock()

    def run(self, host: Host, argv: Sequence[str], *, timeout_s: float, check: bool = True) -> Completed:
        with self._lock:
            if host.name in self.down:
                raise HostUnreachable(host.name, "Connection timed out", host.destination)
            n = self.calls[host.name] = self.calls.get(host.name, 0) + 1
            dies = host.name in self.die_after and n > self.die_after[host.name]
            self.log.append((host.name, tuple(argv)))
        code, out, err = self.answer(host.name, list(argv))
        if dies:
            with self._lock:
                self.down.add(host.name)
                del self.die_after[host.name]
            raise HostUnreachable(host.name, "Broken pipe", host.destination)
        if check and code != 0:
            raise RemoteFailed(host.name, shlex.join(argv), code, err.strip() or "(no message)")
        return Completed(tuple(argv), code, out, err, 0.0)

    def close(self) -> None:
        pass
