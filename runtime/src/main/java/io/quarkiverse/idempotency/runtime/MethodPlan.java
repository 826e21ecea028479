package io.quarkiverse.idempotency.runtime;

import java.util.Map;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.KeyFunction;

/**
 * Everything the interceptors need to know about one {@code @Idempotent} method, resolved once at startup.
 *
 * @param description {@code class#method}, for messages
 * @param singleChannel the channel when the method has exactly one {@code @Incoming}, else {@code null}
 * @param scope the explicit scope, or {@code null} for the delivering channel's name
 * @param keyFunction the key function
 * @param mode where the key is written: {@link IdempotencyMode#IN_TRANSACTION} or {@link IdempotencyMode#LEASE}
 * @param policies the settings per channel
 * @param returns how the method returns
 * @param messageParameter whether the method takes the {@code Message}
 * @param processor whether the method has {@code @Outgoing}: its key is confirmed once its output is acknowledged
 * @param transactional whether the method runs in a JTA transaction
 * @param confirmsInTransaction whether a lease-mode claim is confirmed inside the method's transaction (the store
 *        joins transactions)
 */
public record MethodPlan(String description, String singleChannel, String scope, KeyFunction<Object> keyFunction,
        IdempotencyMode mode, Map<String, DeliveryPolicy> policies, IdempotentMethodInfo.Returns returns,
        boolean messageParameter, boolean processor, boolean transactional, boolean confirmsInTransaction) {

    /** @return the settings for a channel (the programmatic form's scope counts as its channel) */
    public DeliveryPolicy policy(String channel) {
        DeliveryPolicy policy = policies.get(channel);
        if (policy == null) {
            policy = policies.get(singleChannel);
        }
        if (policy == null) {
            throw new IllegalStateException(description + " is not configured for channel " + channel);
        }
        return policy;
    }

    /** @return whether the key is written in the method's own transaction */
    public boolean inTransaction() {
        return mode == IdempotencyMode.IN_TRANSACTION;
    }
}
