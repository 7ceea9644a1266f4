#!/usr/bin/env bash
# scripts/install-python.sh (the set-up's step for Python) makes `import qsweep` work for
# /usr/bin/python3 from another directory. It writes into a scratch user base (PYTHONUSERBASE),
# never the user's own site-packages.
# Usage: install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export PYTHONUSERBASE=$scratch/userbase
unset PYTHONPATH
fail() { echo "install.sh: $*" >&2; exit 1; }
if (cd "$scratch" && /usr/bin/python3 -c "import qsweep" 2>/dev/null); then
  fail "qsweep imports before the installation: the check below would prove nothing"
fi
bash "$source/scripts/install-python.sh" "$build"
pth=$(/usr/bin/python3 -m site --user-site)/qsweep.pth
[ "$(cat "$pth")" = "$(cd "$build" && pwd)/python" ] || fail "$pth names '$(cat "$pth")'"
where=$(cd "$scratch" && /usr/bin/python3 -c "import qsweep, qsweep_results; print(qsweep.__file__)")
[ "$where" = "$(cd "$build" && pwd)/python/qsweep/__init__.py" ] || fail "qsweep imported from $where"
(cd "$scratch" && /usr/bin/python3 -c "
import qsweep
r = qsweep.eval(family='ring', N=4, lambda_=0.5, qmax=10)
assert r['status'] == 'done' and 0 < r['EQ'] < 10, r
") || fail "qsweep.eval failed in the installed module"
echo "install.sh: /usr/bin/python3 imports qsweep from $where"
