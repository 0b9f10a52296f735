"""usage: python bin/provision_users.py ROOT"""
import sys

root = sys.argv[1]
