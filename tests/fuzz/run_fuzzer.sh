#!/usr/bin/env bash
# Runs a libFuzzer target for a fixed number of inputs from a fixed seed, starting from the seed
# corpora given, so that two runs of the same build try the same inputs. New inputs it finds go to
# FOUND (emptied first), never into the seed directories; a crash leaves its input there too.
# usage: run_fuzzer.sh TARGET RUNS FOUND SEED_DIR...
set -euo pipefail
target=$1 runs=$2 found=$3
shift 3
rm -rf "$found"
mkdir -p "$found"
exec "$target" -seed=1 -runs="$runs" -timeout=30 -rss_limit_mb=3072 -print_final_stats=1 \
  -artifact_prefix="$found/" "$found" "$@"
