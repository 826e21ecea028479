package io.quarkiverse.idempotency.runtime;

import jakarta.interceptor.Interceptor;

/**
 * How the outer {@link IdempotencyInterceptor} hands a delivery to an interceptor just inside the method's transaction
 * ({@link TransactionalDeliveryInterceptor} for JTA, {@link ReactiveDeliveryInterceptor} for Hibernate Reactive): in the
 * invocation context data, under a key of each. The keys are constants, so that the outer interceptor never loads the
 * inner ones, which need JTA or Hibernate Reactive (a native image would initialize them).
 */
final class DeliveryHandOff {

    /** Just inside {@code @Transactional} and {@code @WithTransaction} (both PLATFORM_BEFORE + 200). */
    static final int INSIDE_TRANSACTION = Interceptor.Priority.PLATFORM_BEFORE + 210;

    /** The delivery of a method in a JTA transaction. */
    static final String JTA = "io.quarkiverse.idempotency.runtime.Delivery";

    /** The delivery of a {@code @WithTransaction} method. */
    static final String REACTIVE = "io.quarkiverse.idempotency.runtime.Delivery.reactive";

    /**
     * What the outer interceptor runs once a {@code @WithTransaction} method's transaction committed (a
     * {@link Runnable}: it sends what the method wrote to outboxes), left by the inner one.
     */
    static final String AFTER_COMMIT = "io.quarkiverse.idempotency.runtime.Delivery.afterCommit";

    private DeliveryHandOff() {
    }
}
