package io.quarkiverse.idempotency.reactiveonly;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;

import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.testing.LogCapture;
import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The tests' PostgreSQL (database reactive_only_test, created afresh once per test JVM, reached by the applications
 * through the reactive client only) and RabbitMQ: the servers {@code TEST_POSTGRES} and {@code TEST_RABBITMQ} name, or
 * containers.
 */
final class ReactiveOnlyServices {

    static final String DATABASE = "reactive_only_test";
    // Frames of a thread that waits. A blocking socket is sun.nio.ch.NioSocketImpl (under java.net.Socket); Netty's
    // non-blocking channels (sun.nio.ch.SocketChannelImpl, as the reactive client's writes) never wait: a report in
    // one of those is CPU, the loop preempted in the middle of a write.
    private static final List<String> WAITING = List.of("LockSupport.park", "Object.wait", "Thread.sleep",
            "UniBlockingAwait", "sun.nio.ch.NioSocketImpl", "java.net.Socket", "org.postgresql", "io.agroal");

    // A wait is ours when a frame of the extension or of the application's handlers is in the blocked loop's stack: a
    // broker connector's own wait is not (RabbitMQ's connector converts a JSON payload on the event loop, and two
    // loops converting their first messages wait on Jackson's deserializer cache while the other builds it).
    private static final String OURS = "io.quarkiverse.idempotency.";

    private ReactiveOnlyServices() {
    }

    /**
     * Drops the keys' table before the test's application starts, as a new install has none: once per test class and
     * JVM, since a QuarkusUnitTest's class is initialised twice, by JUnit before the application starts and by the
     * application's class loader once it has started (when a drop would undo what startup did).
     */
    static void withoutKeysTable(Class<?> test) {
        String flag = "idempotency.test.no-keys-table." + test.getName();
        if (System.getProperty(flag) == null) {
            System.setProperty(flag, "done");
            Ledger.update("DROP TABLE IF EXISTS idempotency_record CASCADE");
        }
    }

    /**
     * @return Vert.x's reports of an event loop blocked in the extension's or the handlers' code while it waited
     *         (parked, sleeping, in blocking socket I/O: a store call that blocks) rather than computed (on this shared 2-core
     *         machine, a class loaded or a query
     *         parsed for the first time can hold a loop past 100 ms); the logs need their stack frames
     */
    static List<String> waitingLoops(LogCapture logs) {
        return logs.matching("has been blocked for").stream().filter(report -> WAITING.stream().anyMatch(report::contains))
                .filter(report -> report.contains(OURS)).toList();
    }

    /**
     * A poison message (its handler fails every time) on a queue: dead-lettered after its 3 attempts
     * ({@code quarkus.idempotency.retry.max-attempts=3}), never charged, its key dead-lettered with 3 attempts.
     */
    static void deadLettersAPoisonMessage(RabbitQueues broker, Attempts attempts, String queue, String order) {
        broker.publish(queue, "m-" + order, RabbitQueues.payment(order, "\"failures\": 99"));
        GetResponse dead = await().atMost(Duration.ofSeconds(30)).until(() -> broker.nextDeadLetter(queue),
                d -> d != null);
        assertEquals("m-" + order, dead.getProps().getMessageId());
        assertEquals(3, attempts.of(order), "quarkus.idempotency.retry.max-attempts=3");
        assertEquals(0, Ledger.charges(order));
        assertEquals("DEAD_LETTERED", Ledger.state(order));
        assertEquals(3, Ledger.attempts(order));
    }

    /** @return the application with the module's configuration and the tests' servers */
    static QuarkusUnitTest configure(QuarkusUnitTest app) {
        TestServices.Server db = TestServices.freshDatabase(DATABASE);
        app.withConfigurationResource("application.properties")
                .overrideConfigKey("quarkus.datasource.reactive.url",
                        "postgresql://" + db.host() + ":" + db.port() + "/" + DATABASE)
                .overrideConfigKey("quarkus.datasource.username", db.user())
                .overrideConfigKey("quarkus.datasource.password", db.password());
        TestServices.rabbitmqSettings().forEach(app::overrideConfigKey);
        return app;
    }
}
