package io.quarkiverse.idempotency.reactive;

import io.quarkiverse.idempotency.testing.RabbitQueues;

/** The test's own AMQP connection to the real RabbitMQ, and the module's queues. */
public final class Broker extends RabbitQueues {

    public static final String REACTIVE = "reactive-payments";
    public static final String BLOCKING = "blocking-payments";
    public static final String LEASE = "lease-payments";

    public Broker() {
        super("idempotency-reactive-it");
    }

    /** Waits until the application has declared the queues, then empties them. */
    public void reset() {
        purge(REACTIVE, BLOCKING, LEASE);
    }
}
