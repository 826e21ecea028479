#!/usr/bin/env bash
# The demo: payments on RabbitMQ charged exactly once into PostgreSQL (see README).
# Builds the application when it is not built yet, then runs integration-tests/src/demo/Demo.java.
# ./demo.sh --native: the same demo against the application's native executable (built first when missing, with
# .ci/native-build: GraalVM's builder from Maven Central, see shared/native/README.md).
# ./demo.sh --kafka: the same payments on Kafka (integration-tests-kafka/src/demo/KafkaDemo.java), with a local broker
# started by .ci/kafka when none answers on 127.0.0.1:9092.
set -euo pipefail
cd "$(dirname "$0")"
if [ "${1:-}" = "--kafka" ]; then
  if [ ! -f integration-tests-kafka/target/quarkus-app/quarkus-run.jar ]; then
    ./mvnw -B -ntp -q install -DskipTests
  fi
  [ -n "${KAFKA_BOOTSTRAP_SERVERS:-}" ] || bash .ci/kafka
  lib=integration-tests-kafka/target/quarkus-app/lib
  exec java -Djava.util.logging.manager=org.jboss.logmanager.LogManager -cp "$lib/boot/*:$lib/main/*" \
    integration-tests-kafka/src/demo/KafkaDemo.java
fi
if [ ! -f integration-tests/target/quarkus-app/quarkus-run.jar ]; then
  ./mvnw -B -ntp -q install -DskipTests
fi
app=()
if [ "${1:-}" = "--native" ]; then
  version=$(sed -n 's:^    <version>\(.*\)</version>:\1:p' pom.xml | head -n 1)
  runner=integration-tests/target/quarkus-idempotency-integration-tests-$version-runner
  [ -x "$runner" ] || bash .ci/native-build integration-tests
  app=("-Ddemo.app=$runner")
fi
exec java -Djava.util.logging.manager=org.jboss.logmanager.LogManager "${app[@]}" -cp "integration-tests/target/quarkus-app/lib/boot/*:integration-tests/target/quarkus-app/lib/main/*" integration-tests/src/demo/Demo.java
