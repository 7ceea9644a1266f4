#!/usr/bin/env bash
# Configures and builds qsweep in build/ (Release, warnings as errors). Usage: scripts/build.sh [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DQSWEEP_WERROR=ON "$@"
cmake --build build -j "$(nproc)"
