"""usage: python analyze.py logs/access.log logs/app.log"""
import json
import sys

print(json.dumps({}))
