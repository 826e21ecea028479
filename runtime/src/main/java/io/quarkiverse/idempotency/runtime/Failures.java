package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.reactive.messaging.Message;

import io.quarkiverse.idempotency.IdempotencyException;
import io.quarkiverse.idempotency.UnreadablePayloadException;

/** What a connector's failure handler finds in the reason a message was nacked with. */
public final class Failures {

    private Failures() {
    }

    /** @return the extension's outcome among {@code reason} and its causes, or {@code null} when there is none */
    public static IdempotencyException outcomeOf(Throwable reason) {
        for (Throwable t = reason; t != null; t = t.getCause()) {
            if (t instanceof IdempotencyException e) {
                return e;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }

    /**
     * What a connector's failure handler maps to the broker: the extension's outcome; or, for a message that never
     * reached its {@code @Idempotent} method (SmallRye could not convert its payload for it), an unreadable payload,
     * counted and logged here; or {@code null} for any other failure, which is the delegate strategy's.
     *
     * @param message the connector's message
     * @param channel the {@code @Incoming} channel
     * @param reason what it was nacked with
     */
    public static IdempotencyException outcomeToMap(Message<?> message, String channel, Throwable reason,
            Deliveries deliveries) {
        IdempotencyException outcome = outcomeOf(reason);
        if (outcome != null) {
            return outcome;
        }
        InboundMessage inbound = InboundMessages.of(message);
        if (inbound != null && inbound.delivery() != null) {
            return null;
        }
        deliveries.unreadable(channel, message.getMetadata(), reason);
        return new UnreadablePayloadException("The payload of a message of channel " + channel
                + " could not be converted for its @Idempotent method: " + reason, reason);
    }
}
