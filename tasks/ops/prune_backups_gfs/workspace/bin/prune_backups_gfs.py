"""usage: python bin/prune_backups_gfs.py ROOT"""
import sys

root = sys.argv[1]
