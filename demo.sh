#!/usr/bin/env bash
# The demo: payments on RabbitMQ charged exactly once into PostgreSQL (see README).
# Builds the application when it is not built yet, then runs integration-tests/src/demo/Demo.java.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -f integration-tests/target/quarkus-app/quarkus-run.jar ]; then
  ./mvnw -B -ntp -q install -DskipTests
fi
exec java -Djava.util.logging.manager=org.jboss.logmanager.LogManager -cp "integration-tests/target/quarkus-app/lib/boot/*:integration-tests/target/quarkus-app/lib/main/*" integration-tests/src/demo/Demo.java
