"""Grandfather-father-son pruning of $ROOT/var/backups/db-YYYY-MM-DD.sql.gz:
keep the 7 newest daily backups, the newest backup of each of the last 4 ISO weeks, and the newest
of each of the last 6 months (by backup date); delete every other db-*.sql.gz."""
import datetime as dt
import os
import re
import sys

folder = os.path.join(sys.argv[1], "var", "backups")
dates = {}
for name in os.listdir(folder):
    m = re.fullmatch(r"db-(\d{4}-\d{2}-\d{2})\.sql\.gz", name)
    if m:
        dates[name] = dt.date.fromisoformat(m.group(1))
ordered = sorted(dates, key=dates.get, reverse=True)
keep = set(ordered[:7])
weeks, months = {}, {}
for name in ordered:
    weeks.setdefault(dates[name].isocalendar()[:2], name)
    months.setdefault((dates[name].year, dates[name].month), name)
keep |= set(list(weeks.values())[:4]) | set(list(months.values())[:6])
for name in ordered:
    if name not in keep:
        os.remove(os.path.join(folder, name))
