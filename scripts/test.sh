#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs, then runs pytest.
# The libzpool oracle (OpenZFS 2.1 on the host, 2.3 and 2.4 in a trixie chroot) and, as root, the
# e2e guest (real OpenZFS 2.4 and 2.3 kernel modules, one Debian 13 image) must run here: a skip of
# either fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
bash scripts/install-test-deps.sh
t1=$(date +%s)
export ZFSLAB_TEST_REQUIRE_ORACLE=1 ZFSLAB_TEST_REQUIRE_BROWSER=1 ZFSLAB_TEST_REQUIRE_TOOLS=1
# The oracle's trixie chroot (OpenZFS 2.4 and 2.3; tests/oracle/chroot.py, about 2 min when cold,
# mostly download and unpack) builds in the background, beside the guest images.
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
oracle_log=$(mktemp)
$SUDO python3 tests/oracle/chroot.py --build >"$oracle_log" 2>&1 &
oracle_pid=$!
# The minimal Debian 12 and 13 chroots in which tests/setup/test_fresh_debian.py runs the README's first
# line (tests/setup/fresh_debian.py; a few minutes each when cold, mostly download), beside them too.
setup_log=$(mktemp)
$SUDO python3 tests/setup/fresh_debian.py --build >"$setup_log" 2>&1 &
setup_pid=$!
if [ "$(id -u)" = 0 ]; then
  export ZFSLAB_TEST_REQUIRE_E2E=1 ZFSLAB_TEST_REQUIRE_SETUP=1
  # The guest image (2.3 and 2.4 share it; the 2.1 image, Debian 12, is not built for CI) is built
  # inside pytest by the first guest boot's thread, while the host's own tests run: its DKMS builds
  # keep about one core busy for 10-15 min when cold. pytest's summary says how long it took.
  # docs/test-guest.md#time-in-ci
fi
wait "$oracle_pid" || { cat "$oracle_log" >&2; echo "test.sh: the oracle chroot did not build" >&2; exit 1; }
cat "$oracle_log" >&2
wait "$setup_pid" || { cat "$setup_log" >&2; echo "test.sh: the fresh Debian chroots did not build" >&2; exit 1; }
cat "$setup_log" >&2
t2=$(date +%s)
status=0
python3 -m pytest "$@" || status=$?
t3=$(date +%s)
echo "timing: install $((t1 - t0)) s, chroots $((t2 - t1)) s, pytest $((t3 - t2)) s (guest image inside)" >&2
exit $status
