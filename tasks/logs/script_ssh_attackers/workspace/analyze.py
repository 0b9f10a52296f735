"""usage: python analyze.py logs/auth.log"""
import json
import sys

print(json.dumps({}))
