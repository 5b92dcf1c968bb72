#!/usr/bin/env bash
# The test suite, beside a throwaway PostgreSQL (scripts/with-postgres.sh) for the sync tests
# that need one. Arguments go to `swift test` (e.g. --filter 'Convergence').
#
# The tests' temporary files go to a folder of this run (TMPDIR), removed when it ends: a test
# that a crash or a time limit stops never removes its own, and a few suites leave theirs to
# the system's temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-test-run.XXXXXX")
# The PostgreSQL cluster's folder inside it belongs to another user, who must reach it.
chmod 755 "$run_dir"
trap 'rm -rf "$run_dir"' EXIT
TMPDIR="$run_dir" scripts/with-postgres.sh swift test "$@"
