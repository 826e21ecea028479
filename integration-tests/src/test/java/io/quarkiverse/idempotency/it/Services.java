package io.quarkiverse.idempotency.it;

import java.util.Map;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;

/**
 * Points every application under test at the tests' PostgreSQL (database test) and RabbitMQ: the servers
 * {@code TEST_POSTGRES} and {@code TEST_RABBITMQ} name, or containers (see {@link TestServices}). The database starts
 * empty in each test JVM, so that every run also proves the application's migrations create what it needs.
 */
@WithTestResource(value = Services.class, scope = TestResourceScope.GLOBAL)
public class Services implements QuarkusTestResourceLifecycleManager {

    private static boolean emptied;

    /** Empties the demo's database, once per test JVM, before the first application starts. */
    static synchronized void emptyDatabaseOnce() {
        if (!emptied) {
            emptied = true;
            Ledger.execute("DROP SCHEMA IF EXISTS public CASCADE");
            Ledger.execute("CREATE SCHEMA public");
        }
    }

    @Override
    public Map<String, String> start() {
        emptyDatabaseOnce();
        TestServices.Server db = TestServices.postgres();
        TestServices.Server broker = TestServices.rabbitmq();
        return Map.of("quarkus.datasource.jdbc.url", Ledger.url(),
                "quarkus.datasource.username", db.user(),
                "quarkus.datasource.password", db.password(),
                "rabbitmq-host", broker.host(),
                "rabbitmq-port", String.valueOf(broker.port()),
                "rabbitmq-username", broker.user(),
                "rabbitmq-password", broker.password());
    }

    @Override
    public void stop() {
        // the servers outlive the application: the next test class uses them too
    }

    /** The environment of an application process a test starts itself: {@link #environment()}, then {@code env}. */
    public static Map<String, String> with(Map<String, String> env) {
        Map<String, String> all = new java.util.HashMap<>(environment());
        all.putAll(env);
        return all;
    }

    /** The same settings as environment variables, for an application process a test starts itself. */
    public static Map<String, String> environment() {
        emptyDatabaseOnce();
        TestServices.Server db = TestServices.postgres();
        TestServices.Server broker = TestServices.rabbitmq();
        return Map.of("QUARKUS_DATASOURCE_JDBC_URL", Ledger.url(),
                "QUARKUS_DATASOURCE_USERNAME", db.user(),
                "QUARKUS_DATASOURCE_PASSWORD", db.password(),
                "RABBITMQ_HOST", broker.host(),
                "RABBITMQ_PORT", String.valueOf(broker.port()),
                "RABBITMQ_USERNAME", broker.user(),
                "RABBITMQ_PASSWORD", broker.password());
    }
}
