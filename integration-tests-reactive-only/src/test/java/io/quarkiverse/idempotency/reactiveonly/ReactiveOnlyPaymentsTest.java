package io.quarkiverse.idempotency.reactiveonly;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import jakarta.inject.Inject;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkiverse.idempotency.DeadLetter;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.PoolIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.quarkiverse.idempotency.testing.LogCapture;
import io.quarkiverse.idempotency.testing.RabbitQueues;
import io.quarkus.test.QuarkusUnitTest;
import io.vertx.core.json.JsonObject;

/**
 * An application with Hibernate Reactive and the reactive PostgreSQL client only, on the real RabbitMQ and PostgreSQL:
 * no JDBC datasource, yet the keys' table is created at startup, a {@code @WithTransaction} consumer writes its keys in
 * its transaction, a consumer on the event loop claims and confirms through the client, both exclude each other, a
 * poison message is dead-lettered within its budget, expired keys are purged, the health check and the metrics report,
 * and nothing blocks an event loop.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReactiveOnlyPaymentsTest {

    // The module's application, built for this test (a @QuarkusTest would also take in the broken consumer the rule
    // test of this module builds an application of its own from).
    // One table (ReactiveOnlyPartitionsTest runs the same consumers on the default, partitioned one).
    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveOnlyServices.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(PaymentConsumers.class,
                    Charge.class, OrderIdKey.class, Attempts.class, Ledger.class, ReactiveOnlyServices.class)))
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none");

    static {
        // the module's other applications share the database: this one starts without a keys' table
        ReactiveOnlyServices.withoutKeysTable(ReactiveOnlyPaymentsTest.class);
    }

    private static final String TRANSACTIONAL = "reactive-only-transactional";
    private static final String EVENT_LOOP = "reactive-only-event-loop";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static RabbitQueues broker;
    private static LogCapture logs;

    @Inject
    IdempotencyStore store;

    @Inject
    IdempotencyPurge purge;

    @Inject
    DeadLetters deadLetters;

    @Inject
    Attempts attempts;

    @Inject
    MeterRegistry registry;

    @BeforeAll
    static void connect() {
        broker = new RabbitQueues("idempotency-reactive-only-it");
        logs = LogCapture.installWithStackFrames();
    }

    @AfterAll
    static void disconnect() throws Exception {
        logs.close();
        broker.close();
    }

    @BeforeEach
    void emptyQueues() {
        broker.purge(TRANSACTIONAL, EVENT_LOOP);
    }

    @Test
    @Order(1)
    void theApplicationHasNoJdbcAndItsStoreTalksTheReactiveClient() {
        assertThrows(ClassNotFoundException.class, () -> Class.forName("io.agroal.api.AgroalDataSource", false,
                Thread.currentThread().getContextClassLoader()), "no JDBC datasource in the application");
        assertInstanceOf(PoolIdempotencyStore.class, store);
        store.check(); // the table the extension created at startup, with every column of this version
    }

    @Test
    @Order(2)
    void inItsTransactionAnOrderDeliveredThreeTimesIsChargedOnce() {
        double duplicates = outcome(TRANSACTIONAL, "duplicate");
        broker.publish(TRANSACTIONAL, "m-t1", RabbitQueues.payment("T-1", ""));
        broker.publish(TRANSACTIONAL, "m-t1", RabbitQueues.payment("T-1", ""));
        broker.publish(TRANSACTIONAL, "m-t1-again", RabbitQueues.payment("T-1", ""));
        await().atMost(WAIT).until(() -> outcome(TRANSACTIONAL, "duplicate") >= duplicates + 2);
        assertEquals(1, Ledger.charges("T-1"));
        assertEquals("CONFIRMED", Ledger.state("T-1"));
        assertEquals(1, attempts.of("T-1"));
    }

    @Test
    @Order(3)
    void onTheEventLoopAnOrderDeliveredThreeTimesIsChargedOnce() {
        double duplicates = outcome(EVENT_LOOP, "duplicate");
        broker.publish(EVENT_LOOP, "m-e1", RabbitQueues.payment("E-1", ""));
        broker.publish(EVENT_LOOP, "m-e1", RabbitQueues.payment("E-1", ""));
        broker.publish(EVENT_LOOP, "m-e1-again", RabbitQueues.payment("E-1", ""));
        await().atMost(WAIT).until(() -> outcome(EVENT_LOOP, "duplicate") >= duplicates + 2);
        assertEquals(1, Ledger.charges("E-1"));
        assertEquals("CONFIRMED", Ledger.state("E-1"));
        assertEquals(1, attempts.of("E-1"));
    }

    @Test
    @Order(4)
    void aDeliveryOfAKeyTheOtherConsumerHoldsIsBusy() {
        double busy = outcome(TRANSACTIONAL, "busy");
        broker.publish(EVENT_LOOP, "m-e2", RabbitQueues.payment("E-2", "\"slowMs\": 3000"));
        await().atMost(WAIT).until(() -> attempts.of("E-2") == 1);
        broker.publish(TRANSACTIONAL, "m-e2-again", RabbitQueues.payment("E-2", ""));
        await().atMost(WAIT).until(() -> outcome(TRANSACTIONAL, "busy") > busy);
        assertEquals(0, Ledger.charges("E-2"), "told busy while the first delivery still ran");
        await().atMost(WAIT).until(() -> "CONFIRMED".equals(Ledger.state("E-2")) && broker.ready(TRANSACTIONAL) == 0
                && Ledger.claims() == 0);
        assertEquals(1, attempts.of("E-2"), "the busy delivery, redelivered, found the key confirmed");
        assertEquals(1, Ledger.charges("E-2"));
    }

    @Test
    @Order(5)
    void aPoisonMessageIsDeadLetteredWithinItsBudgetByEitherConsumer() {
        ReactiveOnlyServices.deadLettersAPoisonMessage(broker, attempts, TRANSACTIONAL, "T-4");
        ReactiveOnlyServices.deadLettersAPoisonMessage(broker, attempts, EVENT_LOOP, "E-4");
    }

    @Test
    @Order(6)
    void bothConsumersOfOneKeyChargeItOnce() {
        int orders = 20;
        for (int i = 0; i < orders; i++) {
            String order = "M-" + i;
            broker.publish(TRANSACTIONAL, "t-" + order, RabbitQueues.payment(order, ""));
            broker.publish(EVENT_LOOP, "e-" + order, RabbitQueues.payment(order, ""));
        }
        await().atMost(WAIT).until(() -> Ledger.distinctChargesOf("M-") == orders && broker.ready(TRANSACTIONAL) == 0
                && broker.ready(EVENT_LOOP) == 0 && Ledger.claims() == 0);
        assertEquals(orders, Ledger.chargesOf("M-"), "an order charged by both consumers would show twice");
        assertNull(broker.nextDeadLetter(TRANSACTIONAL));
        assertNull(broker.nextDeadLetter(EVENT_LOOP));
    }

    @Test
    @Order(7)
    void expiredKeysArePurged() {
        for (int i = 0; i < 5; i++) {
            Ledger.update("INSERT INTO idempotency_record (scoped_key, scope, state, recorded_at, expires_at, attempts)"
                    + " VALUES (?, 'expired', 'CONFIRMED', now() - interval '2 days', now() - interval '1 day', 0)",
                    "expired:" + i);
        }
        assertEquals(5, Ledger.keys("expired"));
        assertTrue(purge.purgeExpired() >= 5);
        assertEquals(0, Ledger.keys("expired"));
        assertEquals("CONFIRMED", Ledger.state("T-1"), "a key within its retention stays");
    }

    @Test
    @Order(8)
    void theHealthCheckAndTheMetricsReportTheStore() {
        given().when().get("/q/health/ready").then().statusCode(200)
                .body("checks.name", hasItem("Idempotency store"));
        // the oldest claim's age, read through the client by the scrape (NaN if the store could not be read)
        String scraped = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
        String gauge = scraped.lines().filter(line -> line.startsWith("idempotency_claims_oldest_age_seconds"))
                .findFirst().orElseThrow(() -> new AssertionError("no oldest-claim gauge in " + scraped));
        assertTrue(Double.isFinite(Double.parseDouble(gauge.substring(gauge.lastIndexOf(' ') + 1))), gauge);
        assertTrue(outcome(EVENT_LOOP, "handled") > 0);
        assertTrue(outcome(TRANSACTIONAL, "handled") > 0);
    }

    /** The Dev UI page's data (its JSON-RPC service calls these in dev mode), read through the reactive client. */
    @Test
    @Order(9)
    void theDevUiReadsTheKeysAndReleasesADeadLetter() throws Exception {
        // the one reader of every SQL store, here through the reactive client
        Class<?> view = Class.forName("io.quarkiverse.idempotency.runtime.devui.DatabaseKeys");
        Method describe = view.getDeclaredMethod("describe", SqlKeyStore.class, JsonObject.class, int.class);
        describe.setAccessible(true);
        JsonObject state = new JsonObject();
        describe.invoke(null, store, state, 10);
        assertTrue(state.getJsonObject("counts").getLong("CONFIRMED") >= 23, state.encode());
        assertEquals(2L, state.getJsonObject("counts").getLong("DEAD_LETTERED"), state.encode());
        assertEquals(10, state.getJsonArray("recent").size());
        assertEquals("payments", state.getJsonArray("recent").getJsonObject(0).getString("scope"));

        // the dead letters' reader, shared by the page and the management endpoint
        assertEquals(List.of("charge:T-4"), deadLetters.list(DeadLetterFilter.all().forKey("payments", "charge:T-4"))
                .stream().map(DeadLetter::key).toList());
        assertEquals(1, deadLetters.releaseAll(DeadLetterFilter.all().forKey("payments", "charge:T-4")));
        assertEquals("FAILED", Ledger.state("T-4"), "released: its next delivery runs, with a fresh budget");
        assertEquals(0, Ledger.attempts("T-4"));
    }

    @Test
    @Order(20)
    void nothingBlockedTheEventLoop() {
        assertNull(attempts.offEventLoop(), "every handler ran on an event loop");
        // A loop that waits (parked, sleeping, in blocking socket I/O: a store call that blocks) rather than computes. (Other
        // reports are CPU: on this shared 2-core machine, a class loaded or a query parsed for the first time can hold
        // a loop past 100 ms.) The reactive-only store cannot even wait there: it refuses to, on an event loop.
        List<String> blocked = ReactiveOnlyServices.waitingLoops(logs);
        assertTrue(blocked.isEmpty(), "Vert.x's blocked-thread checker: " + blocked);
        assertTrue(logs.matching("on an event loop thread: the idempotency store waits").isEmpty());
    }

    private double outcome(String queue, String outcome) {
        String channel = queue.equals(TRANSACTIONAL) ? "transactional-payments" : "event-loop-payments";
        var counter = registry.find("idempotency.deliveries").tag("channel", channel).tag("outcome", outcome).counter();
        return counter == null ? 0 : counter.count();
    }
}
