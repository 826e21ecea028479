package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.AttemptsExhaustedException;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * A claim whose owner died (its lease ran out) counts as a failed attempt when it is taken over, whichever mode takes
 * it over: a message that kills its process is dead-lettered within its budget instead of being taken over for ever.
 * And a takeover inside a {@code @Transactional} handler's transaction that then fails is counted, not retried every
 * second for ever.
 */
class ExpiredClaimTakeoverTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "charges", "notices" }, Handlers.class,
            Charge.class)
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0")
            .overrideConfigKey("quarkus.idempotency.retry.max-attempts", "3");

    @Inject
    @Connector("smallrye-in-memory")
    InMemoryConnector connector;

    @Inject
    Handlers handlers;

    @Inject
    AgroalDataSource dataSource;

    @BeforeEach
    void clean() throws SQLException {
        sql().execute("DELETE FROM idempotency_record");
        sql().execute("DELETE FROM test_charge");
        handlers.charges.set(0);
        handlers.notices.set(0);
        handlers.fail = false;
    }

    private Sql sql() {
        return new Sql(dataSource);
    }

    // A lease-mode claim whose process died: its lease ran out a second ago.
    private void deadClaim(String scopedKey, int attempts) throws SQLException {
        sql().execute("INSERT INTO idempotency_record (scoped_key, scope, state, claimed_by, recorded_at, lease_until,"
                + " expires_at, attempts) VALUES ('" + scopedKey + "', '" + scopedKey.substring(0, scopedKey.indexOf(':'))
                + "', 'CLAIMED', 'dead-host:1:ab#7', now() - interval '1 minute', now() - interval '1 second',"
                + " now() + interval '1 day', " + attempts + ")");
    }

    @Test
    void aTransactionalHandlerThatFailsAfterTakingOverAnExpiredClaimIsCountedAndDeadLettered() throws SQLException {
        deadClaim("charges:c-1", 0);
        handlers.fail = true;
        HandlerFailedException first = assertInstanceOf(HandlerFailedException.class,
                send("charges", "c-1").nacks().get(0), "a counted attempt, retried after its delay");
        assertEquals(2, first.attempt(), "the dead owner's attempt and this one");
        assertEquals("FAILED 2", state("charges:c-1"));
        assertInstanceOf(AttemptsExhaustedException.class, send("charges", "c-1").nacks().get(0),
                "the third attempt spends the budget of 3");
        assertEquals("DEAD_LETTERED 3", state("charges:c-1"));
        assertEquals(2, handlers.charges.get(), "the handler ran twice; the first attempt was the dead owner's");
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"), "every attempt rolled back");
    }

    @Test
    void aTransactionalHandlerThatTakesOverAnExpiredClaimAndSucceedsIsHandledOnce() throws SQLException {
        deadClaim("charges:c-2", 0);
        assertEquals(1, send("charges", "c-2").acks());
        assertEquals("CONFIRMED 1", state("charges:c-2"), "the dead owner's attempt is counted");
        assertEquals(1, send("charges", "c-2").acks(), "then a duplicate");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    @Test
    void aMessageWhoseOwnersKeepDyingIsDeadLetteredWithinItsBudget() throws SQLException {
        deadClaim("notices:n-1", 2); // two owners died holding it already
        assertInstanceOf(AttemptsExhaustedException.class, send("notices", "n-1").nacks().get(0),
                "the third owner's death spends the budget of 3: dead-lettered without running again");
        assertEquals(0, handlers.notices.get());
        assertEquals("DEAD_LETTERED 3", state("notices:n-1"));
    }

    @Test
    void aLeaseModeTakeoverIsCountedAndTheHandlerRuns() throws SQLException {
        deadClaim("notices:n-2", 0);
        assertEquals(1, send("notices", "n-2").acks());
        assertEquals(1, handlers.notices.get());
        assertEquals("CONFIRMED 1", state("notices:n-2"));
    }

    private String state(String scopedKey) throws SQLException {
        return sql().query("SELECT state || ' ' || attempts FROM idempotency_record WHERE scoped_key = '" + scopedKey
                + "'");
    }

    private Delivered<String> send(String channel, String id) {
        Delivered<String> d = Delivered.withId(id, id);
        connector.source(channel).send(d.message());
        await().atMost(Duration.ofSeconds(15)).until(d::settled);
        return d;
    }

    @Singleton
    public static class Handlers {
        final AtomicInteger charges = new AtomicInteger();
        final AtomicInteger notices = new AtomicInteger();
        volatile boolean fail;

        @Incoming("charges")
        @Idempotent
        @Blocking
        @Transactional
        void charge(String orderId) {
            charges.incrementAndGet();
            Charge.of(orderId).persistAndFlush();
            if (fail) {
                throw new IllegalStateException("card declined");
            }
        }

        @Incoming("notices")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Blocking
        void notice(String id) {
            notices.incrementAndGet();
        }
    }
}
