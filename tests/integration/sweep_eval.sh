#!/usr/bin/env bash
# `qsweep eval --json` against an independent computation of the product form (paper eq. 3):
# a direct sum over job sequences grouped by their union, W_q(B) = sum over (B', S) with
# B' u S = B of W_{q-1}(B') * N lambda p_S / mu(B), written here in Python from the paper's
# formula (not from the C++ engines). Also: --help, --version, bad flags exit 2 with one line.
# Usage: sweep_eval.sh QSWEEP_BINARY SOURCE_DIR
set -euo pipefail
qsweep=$(realpath "$1")
python=/usr/bin/python3

# (Outputs are captured first: `grep -q` closing the pipe early would fail under pipefail.)
version=$("$qsweep" --version)
[[ "$version" == "qsweep "* ]] || { echo "FAIL: --version printed: $version"; exit 1; }
help=$("$qsweep" --help)
[[ "$help" == *eval* ]] || { echo "FAIL: --help lacks eval"; exit 1; }
eval_help=$("$qsweep" eval --help)
[[ "$eval_help" == *--lambda* ]] || { echo "FAIL: eval --help lacks --lambda"; exit 1; }
[[ "$("$qsweep" -V)" == "$version" ]] || { echo "FAIL: -V is not --version"; exit 1; }
[[ "$("$qsweep" help)" == "$help" ]] || { echo "FAIL: qsweep help is not --help"; exit 1; }
[[ "$("$qsweep" help eval)" == "$eval_help" ]] || { echo "FAIL: qsweep help eval is not eval --help"; exit 1; }
# Every flag has a value type (not TEXT), each meaning of a shared key once.
lambda_line=$(grep -e '--lambda ' <<<"$eval_help")
[[ "$lambda_line" == *"--lambda LOAD"*"{heavy_traffic: k}"* ]] || { echo "FAIL: $lambda_line"; exit 1; }
policy_d_line=$(grep -e '--policy_d ' <<<"$eval_help")
[[ "$policy_d_line" == *"--policy_d INT"* && "$policy_d_line" != *"; "* ]] || { echo "FAIL: $policy_d_line"; exit 1; }
if grep -q ' TEXT ' <<<"$eval_help"; then echo "FAIL: eval --help types a flag as TEXT"; exit 1; fi
# Bad flags and values: exit 2, one short line naming the flag (and the closest one).
one_line_error() {  # EXPECTED-FRAGMENT COMMAND...
  local fragment=$1 code=0 out
  shift
  out=$("$@" 2>&1 >/dev/null) || code=$?
  [[ $code -eq 2 ]] || { echo "FAIL: $* exited $code, not 2"; exit 1; }
  [[ "$out" == *"$fragment"* ]] || { echo "FAIL: $*: '$out' lacks '$fragment'"; exit 1; }
  [[ ${#out} -lt 300 ]] || { echo "FAIL: $*: a ${#out}-character message"; exit 1; }
}
one_line_error "unknown option --lamda; did you mean --lambda?" "$qsweep" eval --lamda 0.5
one_line_error "unknown option --bogus" "$qsweep" eval --bogus 1
one_line_error "expected a number of seconds > 0, not 0" "$qsweep" run --progress 0 none.yaml
one_line_error "expected a number of tasks >= 0 (an integer), not -1" "$qsweep" plan --top -1 none.yaml
one_line_error "no command 'evl'" "$qsweep" help evl
ht=$("$qsweep" eval --family ring --N 4 --lambda '{heavy_traffic: 2}' --json)
[[ "$ht" == *'"lambda": 0.99'* ]] || { echo "FAIL: --lambda {heavy_traffic: 2}: $ht"; exit 1; }

"$python" - "$qsweep" <<'PY'
import itertools, json, math, subprocess, sys

qsweep = sys.argv[1]

def product_form(N, types, speeds, lam, qmax):
    """P(Q = q) for q = 0.. until the tail is negligible, by summing eq. (3) over sequences."""
    L = N * lam
    def mu(B):
        return sum(speeds[i] for i in range(N) if B >> i & 1)
    weights = {0: 1.0}
    totals = [1.0]
    while True:
        nxt = {}
        for B, w in weights.items():
            for S, p in types:
                U = B | S
                nxt[U] = nxt.get(U, 0.0) + w * L * p / mu(U)
        weights = nxt
        totals.append(sum(weights.values()))
        if len(totals) > qmax + 1 and totals[-1] < 1e-17 * sum(totals):
            break
    C = 1.0 / sum(totals)
    pmf = [t * C for t in totals]
    EQ = sum(q * x for q, x in enumerate(pmf))
    VarQ = sum(q * q * x for q, x in enumerate(pmf)) - EQ * EQ
    return {"C": C, "EQ": EQ, "VarQ": VarQ, "ET": EQ / L, "pmf": pmf[: qmax + 1]}

def mask(servers):  # 1-based server numbers -> bitmask
    return sum(1 << (s - 1) for s in servers)

def ring(N):
    return [(mask([i, i % N + 1]), 1.0 / N) for i in range(1, N + 1)]

def complete(N, d):
    subsets = list(itertools.combinations(range(1, N + 1), d))
    return [(mask(s), 1.0 / len(subsets)) for s in subsets]

def hetero_ring(N, eps):  # paper eq. (35): edge {i, i+1}, 2 eps / N for even i, 2 (1 - eps) / N odd
    return [(mask([i, i % N + 1]), (eps if i % 2 == 0 else 1 - eps) * 2.0 / N) for i in range(1, N + 1)]

def singletons_full(N, eps):
    return [(mask([i]), (N - 1 - eps) / (N * (N - 1))) for i in range(1, N + 1)] + [
        (mask(range(1, N + 1)), eps / (N - 1))]

def star(N):
    return [(mask([1, i]), 1.0 / (N - 1)) for i in range(2, N + 1)]

def path(N):
    return [(mask([i, i + 1]), 1.0 / (N - 1)) for i in range(1, N)]

cases = [
    (["--family", "ring", "--N", "5", "--lambda", "0.5"], 5, ring(5), [1] * 5, 0.5),
    (["--family", "complete", "--N", "5", "--d", "3", "--lambda", "0.7"], 5, complete(5, 3), [1] * 5, 0.7),
    (["--family", "complete", "--N", "4", "--lambda", "0.4", "--speeds", "[1, 2, 1, 3]"], 4,
     complete(4, 2), [1, 2, 1, 3], 0.4),
    (["--family", "hetero_ring", "--N", "6", "--eps", "0.3", "--lambda", "0.6"], 6,
     hetero_ring(6, 0.3), [1] * 6, 0.6),
    (["--family", "singletons_full", "--N", "4", "--eps", "0.5", "--lambda", "0.8"], 4,
     singletons_full(4, 0.5), [1] * 4, 0.8),
    (["--family", "star", "--N", "5", "--rho", "0.5", "--speeds", "[3, 1, 1, 1, 1]"], 5, star(5),
     [3, 1, 1, 1, 1], 0.5 * 7 / 5),
    (["--family", "path", "--N", "4", "--lambda", "0.3"], 4, path(4), [1] * 4, 0.3),
    (["--family", "explicit", "--N", "3", "--types",
      "[{servers: [1, 2], p: 0.5833333333333334}, {servers: [2, 3], p: 0.4166666666666667}]",
      "--lambda", "0.9"], 3, [(mask([1, 2]), 0.5833333333333334), (mask([2, 3]), 0.4166666666666667)],
     [1, 1, 1], 0.9),
]
qmax = 12
failures = 0
for flags, N, types, speeds, lam in cases:
    out = subprocess.run([qsweep, "eval", "--json", "--qmax", str(qmax)] + flags,
                         capture_output=True, text=True)
    if out.returncode != 0:
        print("FAIL:", " ".join(flags), out.stderr.strip())
        failures += 1
        continue
    got = json.loads(out.stdout)
    want = product_form(N, types, speeds, lam, qmax)
    assert got["status"] == "done", got
    assert abs(got["lambda"] - lam) < 1e-12, (got["lambda"], lam)
    for key in ("C", "EQ", "VarQ", "ET"):
        if not math.isclose(got[key], want[key], rel_tol=1e-9, abs_tol=1e-13):
            print("FAIL:", " ".join(flags), key, got[key], "expected", want[key])
            failures += 1
    for q, (a, b) in enumerate(zip(got["pmf"], want["pmf"])):
        if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-13):
            print("FAIL:", " ".join(flags), "pmf", q, a, "expected", b)
            failures += 1
    if len(got["pmf"]) != qmax + 1:
        print("FAIL: pmf length", len(got["pmf"]))
        failures += 1
print(len(cases), "eval cases,", failures, "failures")
sys.exit(1 if failures else 0)
PY

# Bad parameters: one error line naming the flag, exit code 2, nothing on stdout.
check_bad() {  # expected-fragment, flags...
  local expected=$1
  shift
  local stderr code
  set +e
  stdout=$("$qsweep" eval "$@" 2>/tmp/qsweep_eval_err.$$)
  code=$?
  set -e
  stderr=$(cat /tmp/qsweep_eval_err.$$)
  rm -f /tmp/qsweep_eval_err.$$
  if [[ $code -ne 2 || -n "$stdout" || $(printf '%s\n' "$stderr" | wc -l) -ne 1 || "$stderr" != *"$expected"* ]]; then
    echo "FAIL: eval $*: exit $code, stderr: $stderr"
    exit 1
  fi
}
check_bad "--speeds: speeds has the value -1" --family ring --N 3 --lambda 0.5 --speeds '[1, -1, 1]'
check_bad "type probabilities sum to 0.9" --family explicit --N 3 --lambda 0.5 \
  --types '[{servers: [1, 2], p: 0.5}, {servers: [2, 3], p: 0.4}]'
check_bad "type 2 names server 4, outside 1..3" --family explicit --N 3 --lambda 0.5 \
  --types '[{servers: [1, 2], p: 0.5}, {servers: [2, 4], p: 0.5}]'
check_bad "--N: N = 31 is too large for the general exact engine" --family ring --N 31 --lambda 0.5
check_bad "--qmax: qmax = -1 is out of range" --family ring --N 4 --lambda 0.5 --qmax -1
check_bad "--lambda: lambda = 0 is out of range" --family ring --N 4 --lambda 0
check_bad "--lambda gives 2 values" --family ring --N 4 --lambda '[0.5, 0.6]'
check_bad "--horizon does not apply to method exact" --family ring --N 4 --lambda 0.5 --horizon 10
check_bad "unknown family 'rign' (did you mean 'ring'?)" --family rign --N 4 --lambda 0.5

# An unstable point is not a crash: status unstable, the violating set, exit code 3.
set +e
out=$("$qsweep" eval --json --family ring --N 4 --lambda 1.5 2>/dev/null)
code=$?
set -e
[[ $code -eq 3 ]] || { echo "FAIL: unstable eval exit code $code"; exit 1; }
echo "$out" | "$python" -c 'import json, sys; d = json.load(sys.stdin); assert d["status"] == "unstable" and "servers {1,2,3,4}" in d["error"] and d["EQ"] is None, d'
# --json prints one key per line with every value: N = 10000 servers make one ER_server line of
# 10000 numbers, not 10000 lines.
big=$("$qsweep" eval --json --family complete --N 10000 --d 10000 --lambda 0.5)
lines=$(wc -l <<<"$big")
[[ $lines -lt 100 ]] || { echo "FAIL: eval --json at N = 10000 printed $lines lines"; exit 1; }
"$python" -c 'import json, sys; d = json.load(sys.stdin); s = d["ER_server"]; assert d["status"] == "done" and len(s) == 10000 and min(s) == max(s) > 0, (d["status"], len(s))' <<<"$big"
echo "eval checks passed"
