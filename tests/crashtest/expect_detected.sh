#!/bin/sh
# Runs parley-crashtest with a fault injected and passes only when the
# campaign names it: exit status 1 and a non-zero FIELD in its JSON line.
#   expect_detected.sh BINARY DATA_DIR INJECT FIELD [MORE ARGUMENTS]
set -u
binary=$1 data=$2 inject=$3 field=$4
shift 4
out=$("$binary" --data "$data" --trials 5 --generations-per-store 5 --ag2 '' \
  --inject "$inject" "$@")
status=$?
echo "$out"
[ "$status" -eq 1 ] || { echo "exit status $status, expected 1"; exit 1; }
echo "$out" | grep -q "\"$field\": [1-9]" ||
  { echo "\"$field\" is 0: the injected fault went unseen"; exit 1; }
rm -rf "$data"
