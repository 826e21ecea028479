package io.quarkiverse.idempotency.test.database;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.Priority;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.interceptor.AroundInvoke;
import jakarta.interceptor.Interceptor;
import jakarta.interceptor.InterceptorBinding;
import jakarta.interceptor.InvocationContext;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.spi.Connector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.HandlerFailedException;
import io.quarkiverse.idempotency.HandlerRolledBackException;
import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.test.support.Delivered;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;
import io.smallrye.reactive.messaging.annotations.Blocking;
import io.smallrye.reactive.messaging.memory.InMemoryConnector;

/**
 * "Handled" is decided by how the handler's transaction really ended, not by the method returning: an application
 * interceptor that marks the transaction rollback-only after the handler returned (and after the key was written in
 * it) rolls the work and the key back, and the delivery is a counted, retried attempt, never an ack.
 */
class TransactionOutcomeTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[] { "charges", "leased" }, Handlers.class,
            Charge.class, Veto.class, VetoInterceptor.class)
            .overrideConfigKey("quarkus.idempotency.confirmed-keys-cache-size", "0");

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
        handlers.runs.set(0);
        VetoInterceptor.vetoNext = false;
    }

    private Sql sql() {
        return new Sql(dataSource);
    }

    @Test
    void aTransactionRolledBackAfterTheHandlerReturnedIsARetryNotAnAck() throws SQLException {
        VetoInterceptor.vetoNext = true;
        Delivered<String> vetoed = send("charges", "v-1");
        assertEquals(0, vetoed.acks(), "not acked: its work did not commit");
        HandlerFailedException retry = assertInstanceOf(HandlerFailedException.class, vetoed.nacks().get(0));
        assertInstanceOf(HandlerRolledBackException.class, retry.getCause());
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"));
        assertEquals("FAILED 1", sql().query("SELECT state || ' ' || attempts FROM idempotency_record"
                + " WHERE scoped_key = 'charges:v-1'"), "the key rolled back with the work; the attempt is counted");

        assertEquals(1, send("charges", "v-1").acks(), "the retry runs and commits");
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    @Test
    void aLeaseModeConfirmRolledBackAfterTheHandlerReturnedIsARetryNotAnAck() throws SQLException {
        VetoInterceptor.vetoNext = true;
        Delivered<String> vetoed = send("leased", "v-2");
        assertEquals(0, vetoed.acks());
        assertInstanceOf(HandlerFailedException.class, vetoed.nacks().get(0));
        assertEquals("0", sql().query("SELECT count(*)::text FROM test_charge"));
        assertNull(sql().query("SELECT 1 FROM idempotency_record WHERE scoped_key = 'leased:v-2' AND state"
                + " = 'CONFIRMED'"), "not confirmed");
        assertEquals(1, send("leased", "v-2").acks());
        assertEquals("1", sql().query("SELECT count(*)::text FROM test_charge"));
    }

    private Delivered<String> send(String channel, String id) {
        Delivered<String> d = Delivered.withId(id, id);
        connector.source(channel).send(d.message());
        await().atMost(Duration.ofSeconds(15)).until(d::settled);
        return d;
    }

    /** Binds the application's own interceptor, which runs inside the handler's transaction. */
    @InterceptorBinding
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ ElementType.METHOD, ElementType.TYPE })
    public @interface Veto {
    }

    /**
     * An application interceptor between {@code @Transactional} (PLATFORM_BEFORE + 200) and the extension's inner one
     * (+ 210): it marks the transaction rollback-only after the handler, and the extension's write, returned.
     */
    @Veto
    @Interceptor
    @Priority(Interceptor.Priority.PLATFORM_BEFORE + 205)
    public static class VetoInterceptor {
        static volatile boolean vetoNext;

        @Inject
        TransactionSynchronizationRegistry transactions;

        @AroundInvoke
        Object around(InvocationContext ic) throws Exception {
            Object result = ic.proceed();
            if (vetoNext) {
                vetoNext = false;
                transactions.setRollbackOnly();
            }
            return result;
        }
    }

    @Singleton
    public static class Handlers {
        final AtomicInteger runs = new AtomicInteger();

        @Incoming("charges")
        @Idempotent
        @Blocking
        @Transactional
        @Veto
        void charge(String orderId) {
            runs.incrementAndGet();
            Charge.of(orderId).persistAndFlush();
        }

        @Incoming("leased")
        @Idempotent(mode = IdempotencyMode.LEASE)
        @Blocking
        @Transactional
        @Veto
        void leased(String orderId) {
            runs.incrementAndGet();
            Charge.of(orderId).persistAndFlush();
        }
    }
}
