package io.quarkiverse.idempotency.reactive;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
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
 * An {@code @Idempotent @WithTransaction} consumer that sends a receipt through an {@code OutboxEmitter}, on the real
 * RabbitMQ and PostgreSQL: the receipt is written in the handler's reactive transaction with its charge and its key,
 * and sent once that transaction committed, at once (not by the relay): one receipt per charged order, whatever the
 * duplicates, none for an attempt that failed or marked its transaction for rollback.
 */
class ReactiveOutboxTest {

    private static final String PAYMENTS = "receipted-payments";
    private static final String RECEIPTS = "reactive-receipts";

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveApps.withServices(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                    .addClasses(ReceiptingPaymentConsumer.class, ReactiveCharge.class, OrderIdKey.class, Attempts.class,
                            ReactiveApps.class, ReactiveServices.class, Ledger.class, Broker.class)
                    .addAsResource("db/migration/V1__charges.sql")))
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
    void eachChargedOrderGetsOneReceiptSentAtItsCommit() {
        String run = "RO-" + UUID.randomUUID().toString().substring(0, 6) + "-";
        long sentBefore = outbox.counts().sentAtOnce();
        long relayedBefore = outbox.counts().relayed();
        int orders = 20;
        for (int i = 0; i < orders; i++) {
            String order = run + i;
            broker.publish(PAYMENTS, "m-" + order, Broker.payment(order, ""));
            broker.publish(PAYMENTS, "m-" + order, Broker.payment(order, "")); // a redelivery: no second receipt
        }
        // the order whose first attempt fails after sending its receipt: rolled back, receipt and all
        String failing = run + "failing";
        broker.publish(PAYMENTS, "m-" + failing, Broker.payment(failing, "\"failures\": 1"));
        // the order whose first attempt marks its transaction for rollback and returns: a failed attempt, no receipt
        String markedForRollback = run + "marked";
        broker.publish(PAYMENTS, "m-" + markedForRollback, Broker.payment(markedForRollback, "\"markForRollback\": 1"));
        // two receipts in one transaction, sent in their order
        String twice = run + "twice";
        broker.publish(PAYMENTS, "m-" + twice, Broker.payment(twice, "\"receipts\": 2"));

        Map<String, List<JsonObject>> receipts = new HashMap<>();
        Set<String> ids = new HashSet<>();
        await().atMost(WAIT).until(() -> {
            for (GetResponse r = broker.next(RECEIPTS); r != null; r = broker.next(RECEIPTS)) {
                JsonObject receipt = new JsonObject(new String(r.getBody(), StandardCharsets.UTF_8));
                assertTrue(ids.add(r.getProps().getMessageId()), "each receipt has an id of its own");
                receipts.computeIfAbsent(receipt.getString("orderId"), o -> new ArrayList<>()).add(receipt);
            }
            return receipts.size() == orders + 3 && receipts.get(twice).size() == 2;
        });
        for (int i = 0; i < orders; i++) {
            assertEquals(1, receipts.get(run + i).size(), "one receipt for " + run + i);
            assertEquals(1, Ledger.charges(run + i), "charged once: " + run + i);
        }
        assertEquals(2, attempts.of(failing), "its first attempt failed, the second charged it");
        assertEquals(1, receipts.get(failing).size(), "the rolled-back attempt's receipt was never sent");
        assertEquals(1, Ledger.charges(failing));
        assertEquals(2, attempts.of(markedForRollback), "its first attempt rolled back, which counts as a failure");
        assertEquals(1, receipts.get(markedForRollback).size(), "the rolled-back attempt's receipt was never sent");
        assertEquals(1, Ledger.charges(markedForRollback));
        assertEquals(List.of(1, 2), receipts.get(twice).stream().map(r -> r.getInteger("n")).toList(),
                "in the order the transaction sent them");
        // counted as the broker confirms them, which may come after a consumer has them
        await().atMost(WAIT).until(() -> outbox.counts().sentAtOnce() - sentBefore >= orders + 4);
        assertEquals(orders + 4, outbox.counts().sentAtOnce() - sentBefore, "each sent once, at its commit");
        assertEquals(relayedBefore, outbox.counts().relayed(), "none by the relay");
        await().atMost(WAIT).until(() -> outbox.backlog().waiting() == 0); // each deleted once confirmed
        assertNull(broker.next(RECEIPTS), "nothing more");
    }
}
