"""Facts about the machine a result was measured on."""

from __future__ import annotations

import os
import socket


def host_facts() -> dict:
    cpu = ""
    ram = None
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
        with open("/proc/meminfo") as f:
            ram = next((int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal")), None)
    except OSError:
        pass
    return {"kernel": os.uname().release, "cpu": f"{cpu} x{os.cpu_count()}", "ram_bytes": ram,
            "hostname": socket.gethostname()}
