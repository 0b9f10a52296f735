"""usage: python bin/cleanup_tmp.py ROOT"""
import sys

root = sys.argv[1]
