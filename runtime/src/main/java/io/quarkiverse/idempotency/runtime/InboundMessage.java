package io.quarkiverse.idempotency.runtime;

import java.util.concurrent.atomic.AtomicBoolean;

import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The connector message being handled, the channel it came from, and its delivery once the {@code @Idempotent}
 * method's interceptor started one, as the interceptor and the connector's failure handler find it in the message's
 * Vert.x context. A message whose delivery never started never reached the method.
 */
public final class InboundMessage {

    private final String channel;
    private final Message<?> message;
    private final Iterable<ConnectorSupport> connectors;
    private volatile Delivery delivery;
    private final AtomicBoolean settled = new AtomicBoolean();

    InboundMessage(String channel, Message<?> message, Iterable<ConnectorSupport> connectors) {
        this.channel = channel;
        this.message = message;
        this.connectors = connectors;
    }

    /** @return whether the message may have been delivered before, as its connector tells */
    public boolean mayBeRedelivered() {
        for (ConnectorSupport connector : connectors) {
            if (connector.mayBeRedelivered(message)) {
                return true;
            }
        }
        return false;
    }

    /** @return whether this consumer still owns the message, as its connector tells */
    public boolean stillOwned() {
        for (ConnectorSupport connector : connectors) {
            if (!connector.stillOwned(message)) {
                return false;
            }
        }
        return true;
    }

    /** Tells the message's connector it was handled. */
    void handled() {
        for (ConnectorSupport connector : connectors) {
            connector.handled(message);
        }
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

    /**
     * @return {@code true} for the first caller only: a processor's input is settled by its output's acknowledgement or
     *         by the output-ack timeout, whichever comes first
     */
    boolean settle() {
        return settled.compareAndSet(false, true);
    }

    void started(Delivery delivery) {
        this.delivery = delivery;
    }
}
