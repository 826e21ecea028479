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
import io.quarkiverse.idempotency.test.TestApps;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.QuarkusUnitTest;

/**
 * quarkus.idempotency.database.table renames the table for schema generation, the entity and the store alike.
 */
class CustomTableNameTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.idempotency.database.table", "messaging_keys");

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
}
