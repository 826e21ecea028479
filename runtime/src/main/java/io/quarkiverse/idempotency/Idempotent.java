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
 * Each delivery computes a key (by default the broker's message id), claims it in the {@link IdempotencyStore}
 * (a claim is committed before the method runs), runs the method, and then confirms the key, or forgets it when the
 * method fails so that the redelivery really runs. A delivery whose key is confirmed is acknowledged and skipped; a
 * delivery whose key is claimed by a live handler elsewhere is redelivered later. See the guide for the full table of
 * outcomes.
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
     * A message for which the function returns {@code null} or a blank key is rejected without requeue (dead-lettered).
     */
    @Nonbinding
    Class<? extends KeyFunction> key() default MessageIdKey.class;

    /**
     * How long a handled key is remembered, as a {@link java.time.Duration} string ({@code PT48H}) or a Quarkus
     * shorthand ({@code 48h}); must outlast the slowest duplicate (retries, a dead-letter queue drained by hand, a
     * replay). Empty means {@code quarkus.idempotency.retention}.
     */
    @Nonbinding
    String retention() default "";

    /**
     * How long a claim whose handler has not finished is honoured before another delivery may take it over, in the
     * same format as {@link #retention()}; must outlast the slowest handler (the claim of a running handler is
     * renewed, so this bounds how long a crashed handler's message waits). Empty means
     * {@code quarkus.idempotency.claim-timeout}.
     */
    @Nonbinding
    String claimTimeout() default "";

    /**
     * Opt-in, for {@code @Transactional} methods whose work is all in the store's database: claim the key inside the
     * method's own transaction (inserted as confirmed) instead of in a transaction of its own before it. One commit per
     * message instead of two. A concurrent delivery of the same key waits on the row lock until the first commits
     * (then it is a duplicate) or rolls back (then it runs). Work outside that database (a call to another service,
     * an e-mail) is not protected by a claim that has not committed: leave this off for such methods. Stores that
     * cannot claim inside a transaction (the memory store) ignore it.
     */
    @Nonbinding
    boolean claimInTransaction() default false;
}
