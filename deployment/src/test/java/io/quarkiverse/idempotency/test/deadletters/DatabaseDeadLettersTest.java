package io.quarkiverse.idempotency.test.deadletters;

import java.sql.SQLException;
import java.time.Instant;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkiverse.idempotency.testing.DeadLetterScenario;
import io.quarkus.test.QuarkusUnitTest;

/** {@link DeadLetterScenario} on the database store, over JDBC, on the real PostgreSQL. */
class DatabaseDeadLettersTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0]);

    @Inject
    IdempotencyStore store;

    @Inject
    DeadLetters deadLetters;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void deadLettersAreListedFilteredPagedAndReleased() throws SQLException, InterruptedException {
        new Sql(dataSource).execute("DELETE FROM idempotency_record");
        Instant later = DeadLetterScenario.deadLetter(store);
        DeadLetterScenario.check(deadLetters, store, later);
    }
}
