package io.quarkiverse.idempotency.runtime;

import org.eclipse.microprofile.reactive.messaging.Metadata;

/**
 * Puts each delivery's outcome on the trace, when the application has OpenTelemetry tracing
 * (the {@code opentelemetry} package); otherwise {@link #NONE}.
 */
public interface DeliveryTracing {

    /** Records nothing. */
    DeliveryTracing NONE = new DeliveryTracing() {
        @Override
        public void ended(DeliveryView delivery, Throwable cause) {
        }

        @Override
        public void rejected(String channel, Outcome outcome, Metadata metadata, String reason, Throwable cause) {
        }
    };

    /**
     * A delivery ended with an outcome.
     *
     * @param cause the handler's or the store's failure behind that ending, or {@code null}
     */
    void ended(DeliveryView delivery, Throwable cause);

    /**
     * A message never became a delivery: it had no key, or a payload the method cannot receive.
     *
     * @param metadata the message's metadata
     * @param reason why it is dead-lettered
     * @param cause the failure behind it, or {@code null}
     */
    void rejected(String channel, Outcome outcome, Metadata metadata, String reason, Throwable cause);
}
