#!/bin/sh
echo "coverage is not supported in the offline PLIR workspace" >&2
exit 1
