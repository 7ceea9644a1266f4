"""Checks `qsweep status --json` output (tests/integration/status_json.sh).

Usage: /usr/bin/python3 status_json_check.py SCHEMA.json OUTPUT.json EXIT KEY=VALUE...
Validates OUTPUT against the JSON Schema (Debian's python3-jsonschema), then the facts: writer
(held | none), activity (none | the number of ranks it lists, each heard from), running (a task
id some rank is running), and the counts of `all` (tasks, done, unstable, pending) and warned
tasks.
"""
import json
import sys

import jsonschema


def main():
    schema_path, output_path, exit_code = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(schema_path) as f:
        schema = json.load(f)
    with open(output_path) as f:
        status = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(status)
    problems = []
    if status["exit_code"] != exit_code:
        problems.append(f"exit_code {status['exit_code']}, expected {exit_code}")
    totals = status["counts"]["all"]
    for fact in sys.argv[4:]:
        key, value = fact.split("=", 1)
        if key == "writer":
            held = status["writer"] is not None
            if held != (value == "held"):
                problems.append(f"writer {status['writer']!r}, expected {value}")
        elif key == "activity":
            activity = status["activity"]
            if value == "none":
                if activity is not None:
                    problems.append(f"activity {activity!r}, expected none")
            elif activity is None or sorted(r["rank"] for r in activity["ranks"]) != list(
                    range(int(value))):
                problems.append(f"activity {activity!r}, expected ranks 0..{int(value) - 1}")
        elif key == "running":
            ranks = (status["activity"] or {}).get("ranks", [])
            if not any(int(value) in r["tasks"] and r["since"] for r in ranks):
                problems.append(f"no rank runs task {value}: {ranks!r}")
        elif key == "warned":
            if status["warned_tasks"] != int(value) or len(status["warnings"]) != int(value):
                problems.append(f"warned_tasks {status['warned_tasks']}, expected {value}")
        elif totals[key] != int(value):
            problems.append(f"counts.all.{key} = {totals[key]}, expected {value}")
    methods = [m for m in status["counts"] if m != "all"]
    for key in ("tasks", "done", "failed", "unstable", "pending"):
        if sum(status["counts"][m][key] for m in methods) != totals[key]:
            problems.append(f"the methods' {key} do not add up to all's")
    if totals["unstable"] != len(status["unstable"]):
        problems.append("the unstable list and its count differ")
    if problems:
        print(json.dumps(status, indent=2))
        sys.exit("FAIL: " + "; ".join(problems))


if __name__ == "__main__":
    main()
