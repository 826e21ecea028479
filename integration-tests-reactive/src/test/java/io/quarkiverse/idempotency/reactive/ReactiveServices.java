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
        return environment(Ledger.DATABASE);
    }

    /** @param database the PostgreSQL database of the application, created afresh */
    static Map<String, String> environment(String database) {
        TestServices.freshDatabase(database);
        TestServices.Server db = TestServices.postgres();
        TestServices.Server broker = TestServices.rabbitmq();
        return Map.of("QUARKUS_DATASOURCE_JDBC_URL", db.jdbcUrl(database),
                "QUARKUS_DATASOURCE_REACTIVE_URL", "postgresql://" + db.host() + ":" + db.port() + "/" + database,
                "QUARKUS_DATASOURCE_USERNAME", db.user(),
                "QUARKUS_DATASOURCE_PASSWORD", db.password(),
                "RABBITMQ_HOST", broker.host(),
                "RABBITMQ_PORT", String.valueOf(broker.port()),
                "RABBITMQ_USERNAME", broker.user(),
                "RABBITMQ_PASSWORD", broker.password());
    }
}
