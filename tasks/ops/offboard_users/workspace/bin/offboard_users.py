"""usage: python bin/offboard_users.py ROOT"""
import sys

root = sys.argv[1]
