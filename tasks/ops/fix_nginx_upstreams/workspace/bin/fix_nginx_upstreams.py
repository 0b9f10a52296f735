"""usage: python bin/fix_nginx_upstreams.py ROOT"""
import sys

root = sys.argv[1]
