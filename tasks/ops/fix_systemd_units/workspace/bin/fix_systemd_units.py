"""usage: python bin/fix_systemd_units.py ROOT"""
import sys

root = sys.argv[1]
