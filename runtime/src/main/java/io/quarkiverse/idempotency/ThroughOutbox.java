package io.quarkiverse.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Sends an {@code @Idempotent} processor's output through the transactional outbox: the value the method returns is
 * written to the outbox table in the method's transaction, the same commit as its work and its key, and sent to its
 * {@code @Outgoing} channel once that transaction committed, as an {@link OutboxEmitter} of that channel sends it
 * (broker confirms, a stable id on every re-send, the relay after a crash). A rollback sends nothing.
 *
 * <pre>
 * &#64;Incoming("orders")
 * &#64;Outgoing("receipts")
 * &#64;ThroughOutbox
 * &#64;Idempotent
 * &#64;Transactional
 * public Receipt charge(Order order) { ... }
 * </pre>
 * <p>
 * The method returns the payload ({@code null} sends nothing), or a {@code Uni} of it when it is
 * {@code @WithTransaction}; it takes the payload, is {@code @Transactional} (starting its transaction) or
 * {@code @WithTransaction}, and its {@code @Outgoing} channel has a {@code smallrye-rabbitmq} or {@code smallrye-kafka}
 * connector. The build fails for any other placement. The incoming message is acknowledged once the transaction
 * committed, not when the output is confirmed: the outbox, not the acknowledgement chain, makes sure it is sent.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface ThroughOutbox {
}
