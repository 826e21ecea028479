package io.quarkiverse.idempotency.runtime;

/**
 * How a connector gets a delivery back that must be tried again later (a busy key, a store failure, a failed attempt
 * within its budget): what differs between brokers, decided by the connector's build steps.
 */
public enum Redelivery {
    /** The message is nacked after its delay and the broker delivers it again (RabbitMQ). */
    REQUEUE,
    /**
     * The broker cannot requeue one message without redelivering those behind it (Kafka): the interceptor retries it
     * in place, holding it meanwhile, so nothing is committed past it.
     */
    IN_PLACE
}
