package io.quarkiverse.idempotency;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

/**
 * Makes an {@code @Incoming} method idempotent: a message whose key was already handled is acknowledged without
 * running the method again.
 * <p>
 * Each delivery computes a key (by default the broker's message id) and claims it in the {@link IdempotencyStore}:
 * inside the method's own transaction when it is {@code @Transactional}, else on a lease committed before the method
 * runs (see {@link IdempotencyMode}). A delivery whose key is confirmed is acknowledged and skipped; one whose key is
 * being handled elsewhere is redelivered later. When the method fails, the attempt is counted against the key's
 * budget and the message redelivered after a growing delay; once the budget is spent it is dead-lettered. See the
 * guide for the full table of outcomes.
 * <p>
 * Place it on methods annotated with {@code @Incoming}; the build fails for any other placement.
 */
@InterceptorBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.METHOD, ElementType.TYPE })
public @interface Idempotent {

    /**
     * The scope keys are stored under. Two methods with the same scope share keys; two scopes never do.
     * <p>
     * Empty (the default) means the name of the {@code @Incoming} channel that delivered the message, so that two
     * consumers of one message (fan-out) each handle it once.
     */
    @Nonbinding
    String scope() default "";

    /**
     * The function that computes the key of a message. Its class must have a public no-argument constructor or be a
     * CDI bean; it is instantiated once.
     * <p>
     * The default, {@link MessageIdKey}, uses the broker's message id (RabbitMQ: the {@code message_id} property).
     * A message for which the function returns {@code null} or a blank key, or throws, is rejected without requeue
     * (dead-lettered).
     */
    @Nonbinding
    Class<? extends KeyFunction> key() default MessageIdKey.class;

    /**
     * Where the key is written: in the method's transaction, or on a lease before it. The default chooses per method;
     * see {@link IdempotencyMode}.
     */
    @Nonbinding
    IdempotencyMode mode() default IdempotencyMode.AUTO;

    /**
     * How long a handled key is remembered, as a {@link java.time.Duration} string ({@code PT48H}), a Quarkus shorthand
     * ({@code 48h}) or a configuration expression ({@code ${payments.retention}}); must outlast the slowest duplicate
     * (retries, a dead-letter queue drained by hand, a replay). Empty means {@code quarkus.idempotency.retention};
     * {@code quarkus.idempotency.channels."<channel>".retention} overrides it.
     */
    @Nonbinding
    String retention() default "";

    /**
     * How long a lease-mode claim is honoured unless renewed, in the same format as {@link #retention()}. A running
     * handler's claim is renewed every third of it, so it bounds how long the message of a crashed consumer waits
     * before another delivery takes it over. Empty means {@code quarkus.idempotency.lease};
     * {@code quarkus.idempotency.channels."<channel>".lease} overrides it.
     */
    @Nonbinding
    String lease() default "";

    /**
     * How many attempts a message gets before it is dead-lettered (the first delivery included); each failed attempt
     * is counted in the store, so the budget survives restarts and is shared by every instance. {@code 0} means
     * {@code quarkus.idempotency.retry.max-attempts}; {@code quarkus.idempotency.channels."<channel>".retry.max-attempts}
     * overrides it.
     */
    @Nonbinding
    int maxAttempts() default 0;
}
