package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.IdempotencyRecord;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;

/**
 * quarkus.idempotency.database.table renames the table for schema generation, the entity and the store alike.
 */
class CustomTableNameTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.idempotency.database.table", "messaging_keys")
            // Hibernate ORM alone creates the table here, so that its indexes are the entity's
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate");

    @Inject
    DatabaseIdempotencyStore store;

    @Test
    void storeAndEntityUseTheConfiguredTable() {
        assertEquals(ClaimResult.NEW,
                store.claim(new ScopedKey("t", "k"), "t#1", Duration.ofSeconds(30), Duration.ofHours(1)).result());
        assertEquals(1L, QuarkusTransaction.requiringNew().call(() -> IdempotencyRecord.count()));
        assertEquals(1, ((Number) QuarkusTransaction.requiringNew().call(() -> IdempotencyRecord.getSession()
                .createNativeQuery("SELECT count(*) FROM messaging_keys", Long.class).getSingleResult())).intValue());
    }

    @Test
    void itsIndexesAreNamedAfterIt() {
        // index names are per schema: named after the default table, they would clash with that table's
        assertEquals("messaging_keys_claims,messaging_keys_expires_at,messaging_keys_pkey",
                QuarkusTransaction.requiringNew().call(() -> IdempotencyRecord.getSession().createNativeQuery(
                        "SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes"
                                + " WHERE tablename = 'messaging_keys'",
                        String.class).getSingleResult()));
    }
}
