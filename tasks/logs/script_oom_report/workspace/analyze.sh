#!/bin/bash
# usage: bash analyze.sh logs/syslog
echo '{}'
