package io.quarkiverse.idempotency.deployment;

import java.util.function.BooleanSupplier;

import io.quarkiverse.idempotency.runtime.Redelivery;
import io.quarkus.bootstrap.classloading.QuarkusClassLoader;
import io.quarkus.deployment.annotations.BuildStep;

/**
 * SmallRye's in-memory connector ({@code smallrye-in-memory}), for tests: a nack is the test's to observe. Runs only
 * when the connector is present.
 */
class InMemoryConnectorProcessor {

    /** The in-memory connector's name. */
    static final String CONNECTOR = "smallrye-in-memory";

    @BuildStep(onlyIf = Present.class)
    IdempotentConnectorBuildItem connector() {
        return new IdempotentConnectorBuildItem(CONNECTOR, Redelivery.REQUEUE);
    }

    static final class Present implements BooleanSupplier {
        @Override
        public boolean getAsBoolean() {
            return QuarkusClassLoader.isClassPresentAtRuntime("io.smallrye.reactive.messaging.memory.InMemoryConnector");
        }
    }
}
