package io.quarkiverse.idempotency.runtime;

import java.time.Duration;

import io.quarkiverse.idempotency.KeyFunction;

/**
 * Everything the interceptor needs to know about one {@code @Idempotent} method, resolved once at startup.
 *
 * @param description {@code class#method}, for messages
 * @param singleChannel the channel when the method has exactly one {@code @Incoming}, else {@code null}
 * @param scope the explicit scope, or {@code null} for the delivering channel's name
 * @param keyFunction the key function
 * @param retention how long a handled key is remembered
 * @param claimTimeout how long an unfinished claim is honoured
 * @param returns how the method returns
 * @param messageParameter whether the method takes the {@code Message}
 * @param processor whether the method has {@code @Outgoing}
 * @param transactional whether the method runs in a JTA transaction
 * @param claimInTransaction whether the key is claimed inside the method's transaction (the opt-in mode)
 */
public record MethodPlan(String description, String singleChannel, String scope, KeyFunction<Object> keyFunction,
        Duration retention, Duration claimTimeout, IdempotentMethodInfo.Returns returns, boolean messageParameter,
        boolean processor, boolean transactional, boolean claimInTransaction) {
}
