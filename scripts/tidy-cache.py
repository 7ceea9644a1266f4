#!/usr/bin/env python3
"""The sources clang-tidy must look at again, for scripts/check-tidy.sh (any python3, stdlib only).

A source's findings depend only on its compile command, its preprocessed text with comments (which
holds every header it includes, and every NOLINT), .clang-tidy and the clang-tidy version. A
source whose key, the SHA-256 of all four, was recorded after a clean run cannot have findings
now, so it is skipped.

  tidy-cache.py pending BUILD_DIR PREFIX   prints "KEY FILE" for each source under PREFIX not clean
  tidy-cache.py record BUILD_DIR KEY...    records these keys as clean
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys


def cache_dir(build):
    return os.path.join(build, "tidy-cache")


def preprocess_command(entry):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg != "-c":
            out.append(arg)
    return out + ["-E", "-C"]  # comments kept: NOLINT is one


def key_of(entry, common):
    command = preprocess_command(entry)
    text = subprocess.run(command, cwd=entry["directory"], check=True, capture_output=True).stdout
    digest = hashlib.sha256(common)
    digest.update("\0".join(command).encode())
    digest.update(text)
    return digest.hexdigest()


def pending(build, prefix):
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = [e for e in json.load(f) if e["file"].startswith(prefix)]
    version = subprocess.run(["clang-tidy", "--version"], check=True, capture_output=True).stdout
    with open(".clang-tidy", "rb") as f:
        common = version + f.read()
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        keys = list(pool.map(lambda e: key_of(e, common), entries))
    for entry, key in zip(entries, keys):
        if not os.path.exists(os.path.join(cache_dir(build), key)):
            print(key, entry["file"])


def record(build, keys):
    os.makedirs(cache_dir(build), exist_ok=True)
    for key in keys:
        open(os.path.join(cache_dir(build), key), "w").close()


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "pending":
        pending(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "record":
        record(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
