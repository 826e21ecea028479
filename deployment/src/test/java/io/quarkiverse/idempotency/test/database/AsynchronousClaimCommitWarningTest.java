package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.runtime.database.AsynchronousClaimCommitCheck;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;

/**
 * With asynchronous claim commits, a claim lost in a database crash is made up for only by a transaction: startup
 * names the {@code @Idempotent} methods that run without one, and only those.
 */
class AsynchronousClaimCommitWarningTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "notifications", "charges" }, Handlers.class)
            .overrideConfigKey("quarkus.idempotency.database.asynchronous-claim-commit", "true")
            .setLogRecordPredicate(r -> r.getLoggerName().equals(AsynchronousClaimCommitCheck.class.getName()))
            .assertLogRecords(AsynchronousClaimCommitWarningTest::oneWarningNamingTheMethodWithoutTransaction);

    static void oneWarningNamingTheMethodWithoutTransaction(List<LogRecord> records) {
        assertEquals(1, records.size(), "one warning: " + records);
        LogRecord warning = records.get(0);
        assertEquals(Level.WARNING, warning.getLevel());
        String message = String.format(warning.getMessage(), warning.getParameters());
        assertTrue(message.contains("Handlers#notify"), message);
        assertFalse(message.contains("Handlers#charge"), "the transactional method is safe: " + message);
        assertTrue(message.contains("asynchronous-claim-commit"), message);
    }

    @Inject
    DatabaseIdempotencyStore store;

    @Test
    void theStoreClaimsAsynchronouslyAndStartupWarned() {
        // the warning itself is asserted on the captured log records when the application stops
        assertTrue(store.asynchronousClaimCommit());
    }

    @ApplicationScoped
    public static class Handlers {

        @Incoming("notifications")
        @Idempotent
        @Blocking
        void notify(String text) {
        }

        @Incoming("charges")
        @Idempotent
        @Transactional
        void charge(String orderId) {
        }
    }
}
