# Shell functions the compare-* scripts share; sourced, never run.
# Callers set $db_bench (the db_bench binary) and $scratch (a temporary
# directory) and define die().

# The larger of two decimal numbers.
max() {
  awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 >= b + 0) ? a : b }'
}

# Runs db_bench fillseq (300-byte values, no compression) with extra flags
# on a fresh database, echoes its result line and leaves its ops/sec in
# $ops.
run_db_bench() {
  local label=$1 output line db
  shift
  db=$(mktemp -d "$scratch/db-XXXXXX")
  if ! output=$("$db_bench" --benchmarks=fillseq --value_size=300 \
    --compression_type=none --db="$db" "$@" 2>&1); then
    echo "$output" >&2
    die "db_bench $label failed"
  fi
  rm -rf "$db"
  sync
  line=$(grep '^fillseq' <<<"$output") || die "db_bench $label: no result line"
  printf 'db_bench %-22s %s\n' "$label" "$line"
  ops=$(awk '{ for (i = 2; i <= NF; i++) if ($i == "ops/sec") print $(i - 1) }' \
    <<<"$line")
}

# The ops_per_sec of one scenario in a Parley benchmark's JSON summary
# (one scenario member per line).
json_ops_per_sec() {
  awk -v name="\"$1\":" '
    $1 == name {
      sub(/.*"ops_per_sec": */, ""); sub(/[,}].*/, ""); print; found = 1
    }
    END { if (!found) exit 1 }' "$2" || die "no $1 in $2"
}

# Best ops/sec so far, by db_bench configuration or Parley scenario.
declare -A best
keep_best() {
  best[$1]=$(max "${best[$1]:-0}" "$2")
}
