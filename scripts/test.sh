#!/usr/bin/env bash
# The test suite, beside a throwaway PostgreSQL (scripts/with-postgres.sh) for the sync tests
# that need one. Arguments go to `swift test` (e.g. --filter 'Convergence').
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/with-postgres.sh swift test "$@"
