package io.quarkiverse.idempotency.it;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The tests' own connection to RabbitMQ, and a fresh start for each test: the queues and the demo's tables emptied.
 */
abstract class BrokerTestSupport {

    static Broker broker;

    @BeforeAll
    static void connect() {
        broker = new Broker();
    }

    @AfterAll
    static void disconnect() {
        if (broker != null) {
            broker.close();
        }
    }

    @BeforeEach
    void emptyQueuesAndTables() {
        broker.reset();
        Ledger.reset();
    }
}
