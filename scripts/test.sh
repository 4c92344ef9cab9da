#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what it needs, then runs pytest.
# The libzpool oracle must run here: a skipped oracle test fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-test-deps.sh
export ZFSLAB_TEST_REQUIRE_ORACLE=1
exec python3 -m pytest "$@"
