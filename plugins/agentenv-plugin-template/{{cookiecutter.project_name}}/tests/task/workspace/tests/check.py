"""The task's check: TAP lines to $TAP_REPORT (read by the plugin's tap_file report format)."""

import os
import sys

sys.path.insert(0, os.getcwd())  # the workspace root, where the command runs

from greet import greet  # noqa: E402

CHECKS = [("greets by name", lambda: greet("Ada") == "Hello, Ada!"),
          ("returns text", lambda: isinstance(greet("Bo"), str))]

with open(os.environ["TAP_REPORT"], "w") as report:
    for number, (name, check) in enumerate(CHECKS, 1):
        try:
            ok = bool(check())
        except Exception:
            ok = False
        report.write(f"{'ok' if ok else 'not ok'} {number} - {name}\n")
