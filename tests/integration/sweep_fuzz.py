#!/usr/bin/env python3
"""Writes malformed sweep files for sweep_fuzz.sh: random edits of the example sweeps (lines
deleted, duplicated or swapped; scalars replaced by huge, negative or non-finite numbers, 2^53 + 1,
tags, quotes, control characters, unicode, unbalanced brackets, deep nesting) and blocks of huge
sizes for every method. Standard library only; a fixed seed, so the cases are the same on every
run. Usage: sweep_fuzz.py SWEEPS_DIR OUT_DIR COUNT SEED
"""
import pathlib
import random
import re
import sys

sweeps_dir, out_dir, count, seed = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
bases = [p.read_bytes() for p in sorted(sweeps_dir.glob("*.yaml"))]

VALUES = [
    b"9007199254740993", b"9007199254740993.0", b"9007199254740992", b"-9007199254740993",
    b"18446744073709551616", b"1e308", b"-1e308", b"1e309", b"1e-320", b".nan", b"nan", b".inf",
    b"-.inf", b"-1", b"0", b"-0.0", b"2147483648", b"4294967296", b"10000000", b"5000000",
    b"1e15", b"0x10", b"0o17", b"1_000", b"!!str 0.5", b"'0.5'", b'"8"', b"!!int 0.5",
    b"!!float abc", b"!!int 3", b"!!float 3", b"!!bool true", b"!custom 3", b"!!binary aGk=",
    b'"a\\e[2Jb"', b'"x\\nvalid, 1 tasks"', b'"cut\\0here"', b"\x1b[2J", b"a\x00b", b"\xce\xbb",
    b"\xff\xfe", b"\xe2\x80\xae", b"[1, 2", b"{a: ", b"]", b"}", b"&a 3", b"*nope", b"<<: *a",
    b"~", b"null", b"", b"[]", b"{}", b"[[1, 2], [3]]", b"{linspace: [0, 1, 9007199254740993]}",
    b"{linspace: [1, 1e308, 3]}", b"{logspace: [0, 400, 5]}", b"{heavy_traffic: [1e308]}",
    b"{linspace: [0.1, 0.9, 1e7]}",
]


def deep(depth):
    return b"[" * depth + b"1" + b"]" * depth


def replace_scalar(text):
    spots = [m for m in re.finditer(rb"(?<=: )[^\s{}\[\],#][^\n,}\]#]*", text)]
    spots += [m for m in re.finditer(rb"(?<=[\[, ])-?[0-9][0-9.e+-]*(?=[,\]])", text)]
    if not spots:
        return text
    m = rng.choice(spots)
    value = deep(rng.choice([50, 500, 5000])) if rng.random() < 0.05 else rng.choice(VALUES)
    return text[:m.start()] + value + text[m.end():]


def edit_lines(text):
    lines = text.split(b"\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.randrange(3)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines)


def insert_bytes(text):
    at = rng.randrange(len(text) + 1)
    junk = rng.choice([b"\x00", b"\x1b", b"\x07", b"\r", b"\t", b"\x7f", b"\xc3", b"\xef\xbb\xbf",
                       b"\xf0\x9f\x98\x80", b"[", b"{", b"]", b"}", b":", b"- ", b"&x ", b"*x",
                       b"!!str ", b"'", b'"', b"%YAML 1.2\n", b"---\n", b"\n  "])
    return text[:at] + junk + text[at:]


BLOCKS = [  # huge sizes for every method: each must be refused or planned quickly
    b"{method: exact, family: complete, N: 1000000, d: 500000, lambda: 0.5}",
    b"{method: exact, family: complete, N: 100000, d: 5000, lambda: [0.5, 0.9]}",
    b"{method: exact, family: singletons_full, N: 1000000, eps: 0.5, lambda: 0.5}",
    b"{method: exact, family: independent, N: 1000000, lambda: 0.999999999}",
    b"{method: exact, family: complete, N: 1000000, d: 2, lambda: 0.9999999999, qmax: 100000}",
    b"{method: exact, family: ring, N: 1000000, lambda: 0.5}",
    b"{method: simulate, family: complete, N: 1000000, d: 500000, lambda: 0.5}",
    b"{method: simulate, family: complete, N: 1000000, d: 500000, lambda: 0.5, policy: "
    b"power_of_d, policy_d: 250000}",
    b"{method: simulate, family: singletons_full, N: 1000000, eps: 0.5, lambda: 0.5, policy: "
    b"power_of_d, policy_d: 500000}",
    b"{method: simulate, family: complete, N: 1000000, d: 500000, lambda: 0.5, policy: jsq}",
    b"{method: simulate, family: complete, N: 1000000, d: 999999, lambda: 0.99, policy: "
    b"redundancy_cos}",
    b"{method: ldp, n: 9007199254740992, j: 1000000, T: 1e300, lambda: 0.9}",
    b"{method: ldp, n: 9007199254740992, j: 1000000, T: 1, lambda: 0.9, estimator: exact}",
    b"{method: ldp, n: 9007199254740992, j: 3, T: 1, lambda: 0.9, policy: power_of_d, "
    b"policy_d: 2147483647, estimator: monte_carlo}",
    b"{method: meanfield, policy: redundancy_coc, policy_d: 1000000, lambda: 0.999999}",
    b"{method: meanfield, policy: power_of_d, policy_d: 1000000, lambda: 0.999999999, horizon: "
    b"1000000, time_points: 100000}",
]


def huge_block():
    block = rng.choice(BLOCKS)
    if rng.random() < 0.5:
        block = replace_scalar(b"- " + block)[2:]
    return b"name: huge\nseed: 1\nblocks:\n  - " + block + b"\n"


out_dir.mkdir(parents=True, exist_ok=True)
for case in range(count):
    if case < len(BLOCKS):
        text = b"name: huge\nseed: 1\nblocks:\n  - " + BLOCKS[case] + b"\n"
    elif rng.random() < 0.2:
        text = huge_block()
    else:
        text = rng.choice(bases)
        for _ in range(rng.randint(1, 3)):
            text = rng.choice([replace_scalar, replace_scalar, edit_lines, insert_bytes])(text)
    (out_dir / f"case{case:04d}.yaml").write_bytes(text)
