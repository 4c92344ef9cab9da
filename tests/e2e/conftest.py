import os

# tests/e2e/inside runs where ZFS is (the guest, or a host with spare disks): it is collected
# only when ZFSLAB_E2E_INSIDE=1. Elsewhere test_guest.py boots the guest to run it.
collect_ignore = [] if os.environ.get("ZFSLAB_E2E_INSIDE") == "1" else ["inside"]
