package io.quarkiverse.idempotency.test.deadletters;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.DeadLetter;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkiverse.idempotency.testing.DeadLetterScenario;
import io.quarkus.test.QuarkusUnitTest;

/** {@link DeadLetterScenario} on the database store, over JDBC, on the real PostgreSQL. */
class DatabaseDeadLettersTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            // a row past its expiry stays until the purge: none runs here, so such a row stays while it is looked at
            .overrideConfigKey("quarkus.idempotency.purge.every", "off")
            // one table: the test expires keys by hand (a minute ago), which a partitioned table has no partition for
            // in the first minute of one
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none");

    @Inject
    IdempotencyStore store;

    @Inject
    DeadLetters deadLetters;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void deadLettersAreListedFilteredPagedAndReleased() throws SQLException {
        new Sql(dataSource).execute("DELETE FROM idempotency_record");
        Instant later = DeadLetterScenario.deadLetter(store);
        DeadLetterScenario.check(deadLetters, store, later);
    }

    /**
     * A dead-lettered row past its expiry that the purge has not removed yet: a claim does not look at the expiry, so
     * it still dead-letters its key's deliveries; the reader shows it and releases it.
     */
    @Test
    void aDeadLetterPastItsExpiryNotPurgedYetIsListedAndReleased() throws SQLException {
        Sql sql = new Sql(dataSource);
        sql.execute("DELETE FROM idempotency_record");
        ScopedKey key = new ScopedKey("expired-letters", "order-1");
        store.claim(key, "t", Duration.ofSeconds(30), Duration.ofHours(1));
        store.recordFailure(key, "t", "boom", 1, Duration.ofHours(1));
        sql.execute("UPDATE idempotency_record SET expires_at = now() - interval '1 minute'");
        assertEquals(ClaimResult.DEAD_LETTERED, store.claim(key, "t2", Duration.ofSeconds(30), Duration.ofHours(1))
                .result(), "still dead-lettering its deliveries");
        assertTrue(deadLetters.find("expired-letters", "order-1").isPresent());
        assertEquals(1, deadLetters.releaseAll(DeadLetterFilter.all().forKey("expired-letters", "order-1")));
        assertEquals(ClaimResult.NEW, store.claim(key, "t3", Duration.ofSeconds(30), Duration.ofHours(1)).result());
    }

    /** A scope with ':' and '\' (escaped in the stored key): its keys are listed as the key function made them. */
    @Test
    void aScopeWithAColonListsAndReleasesItsKeys() throws SQLException {
        new Sql(dataSource).execute("DELETE FROM idempotency_record");
        ScopedKey key = new ScopedKey("billing:v2\\eu", "order-1");
        store.claim(key, "t", Duration.ofSeconds(30), Duration.ofHours(1));
        store.recordFailure(key, "t", "boom", 1, Duration.ofHours(1));
        assertEquals(List.of("order-1"), deadLetters.list(DeadLetterFilter.all()).stream().map(DeadLetter::key)
                .toList());
        assertTrue(deadLetters.find("billing:v2\\eu", "order-1").isPresent());
        assertEquals(1, deadLetters.releaseAll(DeadLetterFilter.all().forKey("billing:v2\\eu", "order-1")));
    }
}
