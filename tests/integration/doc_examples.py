"""Extracts the code blocks of the documentation for tests/integration/doc_examples.sh.

Usage: /usr/bin/python3 doc_examples.py SOURCE_DIR COMMAND ...
  text FILE KEY        the text of the one block of FILE that KEY names
  commands FILE KEY    its shell commands, NUL-separated, each as EXPECTED_EXIT TAB TASKS TAB
                       COMMAND (continuation lines joined; blank and comment-only lines left out)
  audit FILE...        reads FILE TAB KEY lines (every block the test runs or lists as not run)
                       on stdin; fails naming each block of the FILEs that no key names, and each
                       key that names no block
  status-shape DOC REAL   `qsweep status` text: REAL has the lines DOC (a block) shows
  json-keys DOC REAL      `qsweep status --json`: REAL has the keys DOC (a block) shows
  like FILE KEY OUTPUT    a line of OUTPUT is the block's first line with other numbers and
                          durations (`4m38s`)

A block is a fenced block (```lang ... ```) or an indented one (4 spaces more than the list
around it, after a blank line). KEY is the start of the block's first non-blank line (spaces
around it stripped), or /REGEX/ searched in its whole text; it must name exactly one block.
A command's expected exit code is 0 unless its comment says `exit N` (`... # exit 3: ...`);
TASKS is N when its comment says `N tasks` (its output must say so too), else `-`.
"""
import json
import re
import sys

FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)")
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")


def blocks(path):
    """The code blocks of a Markdown file: dicts with line, lang, text, first."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i = [], 0
    prev_blank, list_indent = True, None
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            indent, marker, lang = len(fence.group(1)), fence.group(2), fence.group(3)
            body, i = [], i + 1
            while i < len(lines) and not re.match(r"^ {0,3}" + re.escape(marker[0]) + "{%d,}\\s*$"
                                                  % len(marker), lines[i]):
                body.append(lines[i][indent:] if lines[i][:indent].isspace() else lines[i])
                i += 1
            found.append(make_block(i - len(body), lang, body))
            i, prev_blank = i + 1, False
            continue
        blank = not line.strip()
        depth = len(line) - len(line.lstrip())
        code_indent = 4 if list_indent is None else list_indent + 4
        if not blank and prev_blank and depth >= code_indent:
            start, body = i, []
            while i < len(lines) and (not lines[i].strip()
                                      or len(lines[i]) - len(lines[i].lstrip()) >= code_indent):
                body.append(lines[i][code_indent:])
                i += 1
            while body and not body[-1].strip():
                body.pop()
            found.append(make_block(start + 1, "", body))
            prev_blank = True
            continue
        item = LIST_ITEM.match(line)
        if item:
            list_indent = len(item.group(0))
        elif not blank and list_indent is not None and depth < list_indent:
            list_indent = None  # a paragraph left of the list's content ends the list
        prev_blank = blank
        i += 1
    return found


def make_block(line, lang, body):
    text = "\n".join(body).rstrip("\n") + "\n"
    first = next((b.strip() for b in body if b.strip()), "")
    return {"line": line, "lang": lang, "text": text, "first": first}


def matches(block, key):
    if len(key) > 2 and key.startswith("/") and key.endswith("/"):
        return re.search(key[1:-1], block["text"]) is not None
    return block["first"].startswith(key.strip())


def one_block(source_dir, file, key):
    named = [b for b in blocks(f"{source_dir}/{file}") if matches(b, key)]
    if len(named) != 1:
        sys.exit(f"doc_examples: {len(named)} blocks of {file} are named by {key!r} (need one)")
    return named[0]


def commands(text):
    """(expected exit code, tasks claimed or "-", command) for each command of a shell block."""
    out, pending = [], ""
    for line in text.split("\n"):
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line, pending = pending + line, ""
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        comment = line.split("  #", 1)[1] if "  #" in line else ""
        code = re.search(r"\bexit (\d+)\b", comment)
        tasks = re.search(r"\b(\d+) tasks\b", comment)
        out.append((int(code.group(1)) if code else 0, tasks.group(1) if tasks else "-",
                    line.strip()))
    return out


def audit(source_dir, files):
    keys = [line.rstrip("\n").split("\t", 1) for line in sys.stdin if line.strip()]
    problems = []
    for file, key in keys:
        if file not in files:
            problems.append(f"{file}: a key for a file the test does not audit: {key!r}")
    for file in files:
        file_keys = [k for f, k in keys if f == file]
        found = blocks(f"{source_dir}/{file}")
        for key in file_keys:
            count = sum(matches(b, key) for b in found)
            if count != 1:
                problems.append(f"{file}: the test's key {key!r} names {count} blocks (need one)")
        for b in found:
            if not any(matches(b, k) for k in file_keys):
                problems.append(f"{file}:{b['line']}: a block the test neither runs nor lists as "
                                f"not run: {b['first']!r}")
    for p in problems:
        print("FAIL:", p)
    total = sum(len(blocks(f"{source_dir}/{f}")) for f in files)
    print(f"doc_examples: {len(keys)} keys for {total} blocks of {len(files)} files")
    return 1 if problems else 0


STATUS_ROW = re.compile(r"^\w+( +\d+){5}$")
STATUS_SECTION = re.compile(r"^(failed|unstable|warnings) \((\d+)(, first \d+)?\):$")
STATUS_ITEM = re.compile(r"^  task \d+ \(\w+\): \S")


def status_shape(doc_text, real_text):
    """The lines of real `qsweep status` output have the kinds the documented example shows."""
    doc = [l for l in doc_text.split("\n") if not l.startswith("$ ")]

    def shape(lines):
        labels = [m.group(1) for l in lines for m in [re.match(r"^(\w+):\s", l)] if m]
        header = [l.split() for l in lines if l.startswith("method ")]
        rows = [l for l in lines if STATUS_ROW.match(l)]
        sections = [m.group(1) for l in lines for m in [STATUS_SECTION.match(l)] if m]
        items = [l for l in lines if STATUS_ITEM.match(l)]
        other = [l for l in lines if l.strip() and not (re.match(r"^(\w+):\s", l)
                 or l.startswith("method ") or STATUS_ROW.match(l) or STATUS_SECTION.match(l)
                 or STATUS_ITEM.match(l))]
        return labels, header, rows, sections, items, other

    d, r = shape(doc), shape(real_text.split("\n"))
    problems = []
    if d[0] != r[0]:
        problems.append(f"labels {r[0]} where the doc shows {d[0]}")
    if d[1] != r[1] or len(r[1]) != 1:
        problems.append(f"table header {r[1]} where the doc shows {d[1]}")
    if not r[2] or not r[2][-1].startswith("all "):
        problems.append("no table rows ending with `all`")
    if not set(r[3]) <= set(d[3]) or not r[4]:
        problems.append(f"sections {r[3]} (items {len(r[4])}) where the doc shows {d[3]}")
    if d[5] or r[5]:
        problems.append(f"lines of no known kind: doc {d[5]}, real {r[5]}")
    for line in doc:  # `first M` is shown only when there are more than M
        m = STATUS_SECTION.match(line)
        if m and m.group(3) and int(m.group(2)) <= int(m.group(3)[len(", first "):]):
            problems.append(f"the doc's {line!r} shows `first` for no more than the limit")
    version = [re.findall(r"\(qsweep-results v\d+\)", t) for t in (doc_text, real_text)]
    if version[0] != version[1]:
        problems.append(f"format {version[1]} where the doc shows {version[0]}")
    return problems


def json_keys(doc, real, where="status"):
    """The keys (and JSON types) of the documented object are those of the real one."""
    if doc is None or real is None:
        return []  # null where the other has a value: `writer`, optional numbers
    if type(doc) != type(real) and not {type(doc), type(real)} <= {int, float}:
        return [f"{where}: {type(real).__name__} where the doc shows {type(doc).__name__}"]
    if isinstance(doc, dict):
        if where == "status.counts":  # one entry per method group: compare the entries' keys
            return [p for name, value in real.items()
                    for p in json_keys(next(iter(doc.values())), value, f"{where}.{name}")]
        problems = []
        if set(doc) != set(real):
            problems.append(f"{where}: keys {sorted(real)} where the doc shows {sorted(doc)}")
        for k in set(doc) & set(real):
            problems += json_keys(doc[k], real[k], f"{where}.{k}")
        return problems
    if isinstance(doc, list) and doc:
        return [p for value in real for p in json_keys(doc[0], value, f"{where}[]")]
    return []


def like(line, output):
    """Whether a line of output is LINE with other numbers and durations."""
    pattern, duration, number = "", r"(\d+[dhms])+", r"\d+(\.\d+)?(e[+-]?\d+)?"
    for token in re.split(r"(\d+[dhms](?:\d+[dhms])*\b|\d+(?:\.\d+)?)", line.strip()):
        if re.fullmatch(duration, token):
            pattern += duration
        elif re.fullmatch(number, token):
            pattern += number
        else:
            pattern += re.escape(token)
    return any(re.fullmatch(pattern, l.strip()) for l in output.split("\n"))


def main():
    source_dir, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if command == "text":
        sys.stdout.write(one_block(source_dir, *args)["text"])
    elif command == "commands":
        for code, tasks, line in commands(one_block(source_dir, *args)["text"]):
            sys.stdout.write(f"{code}\t{tasks}\t{line}\0")
    elif command == "audit":
        return audit(source_dir, args)
    elif command == "like":
        file, key, output = args
        line = one_block(source_dir, file, key)["first"]
        if not like(line, open(output, encoding="utf-8").read()):
            print(f"FAIL: {file}: no line of {output} is like {line!r}")
            return 1
    elif command in ("status-shape", "json-keys"):
        doc_text, real_text = (open(p, encoding="utf-8").read() for p in args)
        if command == "status-shape":
            problems = status_shape(doc_text, real_text)
        else:
            problems = json_keys(json.loads(doc_text), json.loads(real_text))
        for p in problems:
            print("FAIL:", command, p)
        return 1 if problems else 0
    else:
        sys.exit(f"doc_examples: unknown command {command!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
