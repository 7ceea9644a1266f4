#!/usr/bin/env python3
"""The sources clang-tidy must look at again, for scripts/check-tidy.sh (any python3, stdlib only).

A source's findings depend only on its compile command, its preprocessed text with comments (which
holds every header it includes, and every NOLINT), .clang-tidy and the clang-tidy version. A
source whose key, the SHA-256 of all four, was recorded after a clean run cannot have findings
now, so it is skipped. The checkout's own path is left out of the key (findings do not depend on
it), so that the keys, kept per user like a compiler cache, serve every clone and build directory.

  tidy-cache.py pending BUILD_DIR PREFIX   prints "KEY FILE" for each source under PREFIX not clean
  tidy-cache.py record KEY...              records these keys as clean
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys


def cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "qsweep", "tidy")


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


def key_of(entry, common, root):
    command = preprocess_command(entry)
    text = subprocess.run(command, cwd=entry["directory"], check=True, capture_output=True).stdout
    digest = hashlib.sha256(common)
    digest.update("\0".join(command).replace(root, "<root>").encode())
    digest.update(text.replace(root.encode(), b"<root>"))
    return digest.hexdigest()


def pending(build, prefix):
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = [e for e in json.load(f) if e["file"].startswith(prefix)]
    version = subprocess.run(["clang-tidy", "--version"], check=True, capture_output=True).stdout
    with open(".clang-tidy", "rb") as f:
        common = version + f.read()
    root = os.getcwd()  # the checkout (check-tidy.sh runs from it)
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        keys = list(pool.map(lambda e: key_of(e, common, root), entries))
    for entry, key in zip(entries, keys):
        if not os.path.exists(os.path.join(cache_dir(), key)):
            print(key, entry["file"])


def record(keys):
    os.makedirs(cache_dir(), exist_ok=True)
    for key in keys:
        open(os.path.join(cache_dir(), key), "w").close()


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "pending":
        pending(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 2 and sys.argv[1] == "record":
        record(sys.argv[2:])
    else:
        sys.exit(__doc__)
