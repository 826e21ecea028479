package io.quarkiverse.idempotency.test.store;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.test.support.DelegatingStore;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * An application's own store replaces the database store entirely: its table is not checked (nor needed) at startup.
 */
class CustomStoreWithoutTableTest {

    static {
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS idempotency_record");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], OwnStore.class, DelegatingStore.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none");

    @Inject
    IdempotencyStore store;

    @Test
    void startsWithItsOwnStore() {
        assertTrue(store instanceof OwnStore, store.getClass().getName());
    }

    @Singleton
    public static class OwnStore extends DelegatingStore {
    }
}
