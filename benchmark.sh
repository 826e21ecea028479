#!/usr/bin/env bash
# The benchmark (see the guide's Benchmarks page): builds the benchmark application and runs it against the local RabbitMQ
# and PostgreSQL (database root). Prints its figures; the last line is machine-readable.
# Sizes: -Dbench.messages=20000 -Dbench.rounds=5 -Dbench.warmup=10000 -Dbench.store-ops=5000 -Dbench.purge-rows=1000000
# -Dbench.only=plain-nontx,idempotent-nontx: only those consumers, their best runs and nothing else (a quick look).
# ./benchmark.sh soak [-Dbench.soak.seconds=900 -Dbench.soak.retention-seconds=120]: the soak instead, the key table
# partitioned and unpartitioned; one SOAK line per store.
# ./benchmark.sh layouts [-Dbench.layouts.rounds=5 -Dbench.layouts.messages=40000 -Dbench.layouts.warmup-seconds=60]: only the
# last measurement, the default consumer on a table partitioned by time against the same on one table, Spring's receiver and
# plain, each a process of its own; its LAYOUTS line.
set -euo pipefail
cd "$(dirname "$0")"
mode=""
if [ "${1:-}" = soak ] || [ "${1:-}" = layouts ]; then
  mode=$1
  shift
fi
./mvnw -B -ntp -q -Pbenchmark install -DskipTests -pl benchmark -am
exec java "$@" -jar benchmark/target/quarkus-app/quarkus-run.jar $mode
