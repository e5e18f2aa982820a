"""The Python clients' tally: one `PASS rule` or `FAIL rule  -- detail` line per rule,
which interop/run counts, and a closing line and exit status."""
import sys

failures = []
passed = 0


def check(rule, ok, detail=""):
    global passed
    print(("PASS " if ok else "FAIL ") + rule + ("" if ok else f"  -- {detail}"))
    if ok:
        passed += 1
    else:
        failures.append(rule)


def finish():
    """Prints the tally and exits, non-zero if any rule failed."""
    print(f"\n{passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)
