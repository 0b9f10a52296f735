"""usage: python bin/render_env_files.py ROOT"""
import sys

root = sys.argv[1]
