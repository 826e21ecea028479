package io.quarkiverse.idempotency.runtime;

import java.util.List;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.MessageFacts;

/**
 * The message behind one delivery, as far as a duplicate of its key is concerned: its facts (id and payload
 * fingerprint), kept with the key when the delivery writes it, and what its connector tells about redeliveries, asked
 * only when the key turns out to be a duplicate.
 */
final class Arrival {

    /** @return a delivery's message that is not known (tests, and calls without a message) */
    static Arrival unknown() {
        return new Arrival(MessageFacts.NONE, null, List.of());
    }

    private final MessageFacts facts;
    private final Message<?> message;
    private final List<ConnectorSupport> connectors;
    /** Where this message comes from, once its key was found confirmed. */
    private volatile DuplicateOrigin origin;

    Arrival(MessageFacts facts, Message<?> message, List<ConnectorSupport> connectors) {
        this.facts = facts;
        this.message = message;
        this.connectors = connectors;
    }

    /** @return this message's id and payload fingerprint */
    MessageFacts facts() {
        return facts;
    }

    /**
     * @param seen the facts kept with the key, of the message that wrote it
     * @return where this duplicate comes from: another id is a republish; else the connector's word when it has one
     *         (RabbitMQ's {@code redelivered}); else the same id is the same message read again
     */
    DuplicateOrigin originOf(MessageFacts seen) {
        origin = origin(facts.messageId(), seen);
        return origin;
    }

    /** @return where this message comes from, once {@link #originOf} was asked; else {@code null} */
    DuplicateOrigin origin() {
        return origin;
    }

    private DuplicateOrigin origin(String id, MessageFacts seen) {
        if (id != null && seen.messageId() != null && !id.equals(seen.messageId())) {
            return DuplicateOrigin.REPUBLISH;
        }
        Boolean redelivered = redelivered();
        if (redelivered != null) {
            return redelivered ? DuplicateOrigin.REDELIVERY : DuplicateOrigin.REPUBLISH;
        }
        return id != null && id.equals(seen.messageId()) ? DuplicateOrigin.REDELIVERY : DuplicateOrigin.UNKNOWN;
    }

    /** @return how this payload compares with the one the key was written with */
    PayloadMatch compare(MessageFacts seen) {
        if (facts.fingerprint() == null || seen.fingerprint() == null) {
            return PayloadMatch.UNKNOWN;
        }
        return facts.fingerprint().equals(seen.fingerprint()) ? PayloadMatch.SAME : PayloadMatch.MISMATCH;
    }

    private Boolean redelivered() {
        if (message == null) {
            return null;
        }
        for (ConnectorSupport connector : connectors) {
            Boolean redelivered = connector.redelivered(message);
            if (redelivered != null) {
                return redelivered;
            }
        }
        return null;
    }
}
