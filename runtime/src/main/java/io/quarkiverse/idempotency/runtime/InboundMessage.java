package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The connector message being handled, the channel it came from, and its delivery once the {@code @Idempotent}
 * method's interceptor started one, as the interceptor and the connector's failure handler find it in the message's
 * Vert.x context. A message whose delivery never started never reached the method.
 */
public final class InboundMessage {

    private final String channel;
    private final Message<?> message;
    private volatile Delivery delivery;

    InboundMessage(String channel, Message<?> message) {
        this.channel = channel;
        this.message = message;
    }

    /** @return the {@code @Incoming} channel */
    public String channel() {
        return channel;
    }

    /** @return the message as the connector produced it */
    public Message<?> message() {
        return message;
    }

    /** @return the delivery, or {@code null} when the message has not reached the method's interceptor */
    public Delivery delivery() {
        return delivery;
    }

    void started(Delivery delivery) {
        this.delivery = delivery;
    }
}
