"""zfslab: compare ZFS pool layouts on speed, space and safety."""

__version__ = "0.1.0"
