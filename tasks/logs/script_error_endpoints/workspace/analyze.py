"""usage: python analyze.py logs/access.log"""
import json
import sys

print(json.dumps({}))
