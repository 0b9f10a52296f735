"""usage: python bin/render_sites.py ROOT"""
import sys

root = sys.argv[1]
