package io.quarkiverse.idempotency.reactive;

import java.util.Map;

import io.quarkiverse.idempotency.testing.TestServices;

/**
 * The tests' PostgreSQL (database reactive_test, over JDBC and the reactive client) and RabbitMQ: the servers
 * {@code TEST_POSTGRES} and {@code TEST_RABBITMQ} name, or containers (see {@link TestServices}). The database starts
 * afresh in each test JVM.
 */
final class ReactiveServices {

    private ReactiveServices() {
    }

    /** The settings as environment variables, for an application process a test starts itself. */
    static Map<String, String> environment() {
        TestServices.freshDatabase(Ledger.DATABASE);
        TestServices.Server db = TestServices.postgres();
        TestServices.Server broker = TestServices.rabbitmq();
        return Map.of("QUARKUS_DATASOURCE_JDBC_URL", Ledger.url(),
                "QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + db.host() + ":" + db.port() + "/" + Ledger.DATABASE,
                "QUARKUS_DATASOURCE_USERNAME", db.user(),
                "QUARKUS_DATASOURCE_PASSWORD", db.password(),
                "RABBITMQ_HOST", broker.host(),
                "RABBITMQ_PORT", String.valueOf(broker.port()),
                "RABBITMQ_USERNAME", broker.user(),
                "RABBITMQ_PASSWORD", broker.password());
    }
}
