package io.quarkiverse.idempotency.reactive;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import jakarta.inject.Inject;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import com.rabbitmq.client.GetResponse;

import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkus.test.QuarkusUnitTest;
import io.vertx.core.json.JsonObject;

/**
 * A {@code @ThroughOutbox @Idempotent @WithTransaction} processor on the real RabbitMQ and PostgreSQL: the receipt it
 * returns is written in its reactive transaction with its charge and its key, and sent once that transaction
 * committed, at once, under an id of its own: one receipt per charged order, whatever the duplicates; none for an
 * attempt that failed, none for a {@code null} output.
 */
class ReactiveProcessorOutboxTest {

    private static final String PAYMENTS = "processed-payments";
    private static final String RECEIPTS = "processed-receipts";

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveApps.withServices(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                    .addClasses(ReactiveReceiptProcessor.class, ReactiveCharge.class, OrderIdKey.class, Attempts.class,
                            ReactiveApps.class, ReactiveServices.class, Ledger.class, Broker.class)
                    .addAsResource("db/migration/V1__charges.sql")))
            .overrideConfigKey("mp.messaging.incoming.processed-payments.connector", "smallrye-rabbitmq")
            .overrideConfigKey("mp.messaging.incoming.processed-payments.queue.name", PAYMENTS)
            .overrideConfigKey("mp.messaging.incoming.processed-payments.exchange.name", PAYMENTS)
            .overrideConfigKey("mp.messaging.incoming.processed-payments.auto-bind-dlq", "true")
            .overrideConfigKey("mp.messaging.incoming.processed-payments.dlx.declare", "true")
            .overrideConfigKey("mp.messaging.outgoing.processed-receipts.connector", "smallrye-rabbitmq")
            .overrideConfigKey("mp.messaging.outgoing.processed-receipts.exchange.name", RECEIPTS)
            .overrideConfigKey("mp.messaging.outgoing.processed-receipts.exchange.type", "fanout")
            // the relay would send a row only after its 30 s lease: a receipt within seconds was sent at the commit
            .overrideConfigKey("quarkus.idempotency.outbox.relay-every", "off");

    private static final Duration WAIT = Duration.ofSeconds(20);

    private static Broker broker;

    @Inject
    Attempts attempts;

    @Inject
    Outbox outbox;

    @BeforeAll
    static void connect() {
        broker = new Broker();
        broker.bind(RECEIPTS, RECEIPTS);
        broker.purge(PAYMENTS);
    }

    @AfterAll
    static void disconnect() throws Exception {
        broker.close();
    }

    @Test
    void eachChargedOrderSendsOneReceiptAtItsCommit() throws Exception {
        String run = "PO-" + UUID.randomUUID().toString().substring(0, 6) + "-";
        long sentBefore = outbox.counts().sentAtOnce();
        int orders = 20;
        for (int i = 0; i < orders; i++) {
            broker.publish(PAYMENTS, "m-" + run + i, Broker.payment(run + i, ""));
            broker.publish(PAYMENTS, "m-" + run + i, Broker.payment(run + i, "")); // a duplicate: no second receipt
        }
        String failing = run + "failing";
        broker.publish(PAYMENTS, "m-" + failing, Broker.payment(failing, "\"failures\": 1"));
        String skipped = run + "skipped";
        broker.publish(PAYMENTS, "m-" + skipped, Broker.payment(skipped, "\"skip\": true"));

        Map<String, JsonObject> receipts = new HashMap<>();
        Set<String> ids = new HashSet<>();
        await().atMost(WAIT).until(() -> {
            for (GetResponse r = broker.next(RECEIPTS); r != null; r = broker.next(RECEIPTS)) {
                JsonObject receipt = new JsonObject(new String(r.getBody(), StandardCharsets.UTF_8));
                String id = r.getProps().getMessageId();
                assertTrue(id != null && ids.add(id), "each receipt has an id of its own: " + id);
                assertNull(receipts.put(receipt.getString("orderId"), receipt), "one receipt per order: " + receipt);
            }
            return receipts.size() == orders + 1 && Ledger.charges(skipped) == 1;
        });
        for (int i = 0; i < orders; i++) {
            assertEquals(1, Ledger.charges(run + i), "charged once: " + run + i);
            assertEquals(1, attempts.of(run + i), "the duplicate did not run the method");
        }
        assertEquals(2, receipts.get(failing).getInteger("attempt"), "the receipt of the attempt that committed");
        assertEquals(1, Ledger.charges(failing));
        await().atMost(WAIT).until(() -> outbox.counts().sentAtOnce() - sentBefore >= orders + 1);
        assertEquals(orders + 1, outbox.counts().sentAtOnce() - sentBefore, "each sent once, at its commit");
        await().atMost(WAIT).until(() -> outbox.backlog().waiting() == 0);
        // nothing more arrives for a second: each message got its receipt and no second one
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).until(() -> broker.next(RECEIPTS) == null);
    }
}
