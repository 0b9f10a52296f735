"""usage: python bin/hosts_sync.py ROOT"""
import sys

root = sys.argv[1]
