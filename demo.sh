#!/usr/bin/env bash
# The demo: payments charged exactly once into PostgreSQL (see README), on RabbitMQ; builds the application first
# when it is not built yet, then runs integration-tests/src/demo/Demo.java.
#   ./demo.sh            on RabbitMQ, or on Kafka when no RabbitMQ answers
#   ./demo.sh --kafka    on Kafka (integration-tests-kafka/src/demo/KafkaDemo.java)
#   ./demo.sh --native   on RabbitMQ, against the application's native executable (built first when missing, with
#                        .ci/native-build: GraalVM's builder from Maven Central, see shared/native/README.md)
# It needs only a JDK. It uses the servers it finds at the addresses the applications are configured with:
# QUARKUS_DATASOURCE_JDBC_URL (jdbc:postgresql://127.0.0.1:5432/test), RABBITMQ_HOST and RABBITMQ_PORT
# (127.0.0.1:5672), KAFKA_BOOTSTRAP_SERVERS (127.0.0.1:9092). When no PostgreSQL or Kafka answers at a local address,
# it starts one there from Maven Central (.ci/postgres, .ci/kafka) and stops it at the end.
set -euo pipefail
cd "$(dirname "$0")"

variant=rabbitmq
case "${1:-}" in
  --kafka) variant=kafka ;;
  --native) variant=native ;;
  "") ;;
  *) echo "Usage: ./demo.sh [--kafka | --native]" >&2; exit 2 ;;
esac

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
local_host() { [ "$1" = 127.0.0.1 ] || [ "$1" = localhost ]; }
stops=()
stop_started() { for s in "${stops[@]+"${stops[@]}"}"; do bash $s || true; done; }
trap stop_started EXIT

rabbit_host=${RABBITMQ_HOST:-127.0.0.1}
rabbit_port=${RABBITMQ_PORT:-5672}
if [ "$variant" != kafka ] && ! port_open "$rabbit_host" "$rabbit_port"; then
  if [ "$variant" = native ]; then
    echo "No RabbitMQ answers at $rabbit_host:$rabbit_port: the native demo needs one (RABBITMQ_HOST, RABBITMQ_PORT)" >&2
    exit 1
  fi
  echo "No RabbitMQ answers at $rabbit_host:$rabbit_port: running the demo on Kafka instead (./demo.sh --kafka)"
  variant=kafka
fi

url=${QUARKUS_DATASOURCE_JDBC_URL:-jdbc:postgresql://127.0.0.1:5432/test}
if [ "$variant" = kafka ] && [[ "$url" != *currentSchema=* ]]; then
  # the Kafka demo's tables live in their own schema (integration-tests-kafka's application.properties)
  if [[ "$url" == *\?* ]]; then url="$url&currentSchema=kafka_demo"; else url="$url?currentSchema=kafka_demo"; fi
fi
export QUARKUS_DATASOURCE_JDBC_URL="$url"
if [[ "$url" =~ ^jdbc:postgresql://([^/:?]+)(:([0-9]+))?/([^?]+) ]]; then
  db_host=${BASH_REMATCH[1]} db_port=${BASH_REMATCH[3]:-5432} db_name=${BASH_REMATCH[4]}
  if ! port_open "$db_host" "$db_port"; then
    if ! local_host "$db_host" || [ "$db_name" != test ]; then
      echo "No PostgreSQL answers at $db_host:$db_port, and the demo starts one only at 127.0.0.1 with the database test" >&2
      exit 1
    fi
    echo "No PostgreSQL answers at $db_host:$db_port: starting PostgreSQL there from Maven Central (.ci/postgres), stopped at the end"
    stops+=(".ci/postgres stop $db_port")
    bash .ci/postgres "$db_port"
  fi
fi

if [ "$variant" = kafka ]; then
  bootstrap=${KAFKA_BOOTSTRAP_SERVERS:-127.0.0.1:9092}
  kafka_host=${bootstrap%%:*} kafka_port=${bootstrap##*:} kafka_port=${kafka_port%%,*}
  if ! port_open "$kafka_host" "$kafka_port"; then
    if ! local_host "$kafka_host"; then
      echo "No Kafka answers at $kafka_host:$kafka_port, and the demo starts one only at 127.0.0.1" >&2
      exit 1
    fi
    echo "No Kafka answers at $kafka_host:$kafka_port: starting Kafka there from Maven Central (.ci/kafka), stopped at the end"
    stops+=(".ci/kafka stop $kafka_port")
    bash .ci/kafka "$kafka_port"
  fi
  export KAFKA_BOOTSTRAP_SERVERS="$bootstrap"
  [ -f integration-tests-kafka/target/quarkus-app/quarkus-run.jar ] || ./mvnw -B -ntp -q install -DskipTests
  lib=integration-tests-kafka/target/quarkus-app/lib
  java -Djava.util.logging.manager=org.jboss.logmanager.LogManager -cp "$lib/boot/*:$lib/main/*" \
    integration-tests-kafka/src/demo/KafkaDemo.java
  exit
fi

[ -f integration-tests/target/quarkus-app/quarkus-run.jar ] || ./mvnw -B -ntp -q install -DskipTests
app=()
if [ "$variant" = native ]; then
  version=$(sed -n 's:^    <version>\(.*\)</version>:\1:p' pom.xml | head -n 1)
  runner=integration-tests/target/quarkus-idempotency-integration-tests-$version-runner
  [ -x "$runner" ] || bash .ci/native-build integration-tests
  app=("-Ddemo.app=$runner")
fi
lib=integration-tests/target/quarkus-app/lib
java -Djava.util.logging.manager=org.jboss.logmanager.LogManager "${app[@]+"${app[@]}"}" -cp "$lib/boot/*:$lib/main/*" \
  integration-tests/src/demo/Demo.java
