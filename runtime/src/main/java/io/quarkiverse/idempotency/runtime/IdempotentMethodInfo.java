package io.quarkiverse.idempotency.runtime;

import java.util.List;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkus.runtime.annotations.RecordableConstructor;

/**
 * What the build learnt about one {@code @Idempotent} method; recorded at build time, turned into a {@link MethodPlan}
 * at startup.
 */
public final class IdempotentMethodInfo {

    /** How the method returns. */
    public enum Returns {
        /** {@code void} or a value (a processor): synchronous. */
        SYNC,
        /** {@code Uni}. */
        UNI,
        /** {@code CompletionStage}. */
        COMPLETION_STAGE
    }

    private final String description;
    private final List<String> channels;
    private final String scope;
    private final String keyFunctionClass;
    private final IdempotencyMode mode;
    private final String retention;
    private final String lease;
    private final int maxAttempts;
    private final Returns returns;
    private final boolean messageParameter;
    private final boolean processor;
    private final boolean transactional;
    private final String reactivePersistenceUnit;
    private final boolean reactiveStateless;
    private final boolean onEventLoop;
    private final String outboxChannel;

    public IdempotentMethodInfo(String description, List<String> channels, String scope, String keyFunctionClass,
            IdempotencyMode mode, String retention, String lease, int maxAttempts, Returns returns,
            boolean messageParameter, boolean processor, boolean transactional) {
        this(description, channels, scope, keyFunctionClass, mode, retention, lease, maxAttempts, returns,
                messageParameter, processor, transactional, "", false, false, "");
    }

    @RecordableConstructor
    public IdempotentMethodInfo(String description, List<String> channels, String scope, String keyFunctionClass,
            IdempotencyMode mode, String retention, String lease, int maxAttempts, Returns returns,
            boolean messageParameter, boolean processor, boolean transactional, String reactivePersistenceUnit,
            boolean reactiveStateless, boolean onEventLoop, String outboxChannel) {
        this.onEventLoop = onEventLoop;
        this.outboxChannel = outboxChannel;
        this.reactivePersistenceUnit = reactivePersistenceUnit;
        this.reactiveStateless = reactiveStateless;
        this.description = description;
        this.channels = channels;
        this.scope = scope;
        this.keyFunctionClass = keyFunctionClass;
        this.mode = mode;
        this.retention = retention;
        this.lease = lease;
        this.maxAttempts = maxAttempts;
        this.returns = returns;
        this.messageParameter = messageParameter;
        this.processor = processor;
        this.transactional = transactional;
    }

    /** @return {@code class#method}, for messages */
    public String getDescription() {
        return description;
    }

    /** @return the {@code @Incoming} channels */
    public List<String> getChannels() {
        return channels;
    }

    /** @return the explicit scope, or empty for the channel name */
    public String getScope() {
        return scope;
    }

    /** @return the key function's class name */
    public String getKeyFunctionClass() {
        return keyFunctionClass;
    }

    /**
     * @return the mode: as resolved by the build ({@code IN_TRANSACTION} or {@code LEASE}), or {@code AUTO} when it
     *         depends on whether the store joins transactions, known at startup (an application's own store)
     */
    public IdempotencyMode getMode() {
        return mode;
    }

    /** @return the explicit retention (a duration or an expression), or empty for the configured default */
    public String getRetention() {
        return retention;
    }

    /** @return the explicit lease (a duration or an expression), or empty for the configured default */
    public String getLease() {
        return lease;
    }

    /** @return the explicit attempt budget, or 0 for the configured default */
    public int getMaxAttempts() {
        return maxAttempts;
    }

    /** @return how the method returns */
    public Returns getReturns() {
        return returns;
    }

    /** @return whether the method takes the {@code Message} rather than its payload */
    public boolean isMessageParameter() {
        return messageParameter;
    }

    /** @return whether the method also has {@code @Outgoing} */
    public boolean isProcessor() {
        return processor;
    }

    /** @return whether the method always runs in a JTA transaction it starts ({@code @Transactional}) */
    public boolean isTransactional() {
        return transactional;
    }

    /**
     * @return the persistence unit of the method's {@code @WithTransaction} (Hibernate Reactive), or empty when it has
     *         none
     */
    public String getReactivePersistenceUnit() {
        return reactivePersistenceUnit;
    }

    /** @return whether the method's {@code @WithTransaction} opens a stateless session */
    public boolean isReactiveStateless() {
        return reactiveStateless;
    }

    /** @return whether the method runs in a Hibernate Reactive transaction it starts ({@code @WithTransaction}) */
    public boolean isReactiveTransactional() {
        return !reactivePersistenceUnit.isEmpty();
    }

    /** @return whether the method runs on the event loop in lease mode (asynchronous, not {@code @Blocking}) */
    public boolean isOnEventLoop() {
        return onEventLoop;
    }

    /**
     * @return the {@code @Outgoing} channel whose outbox the method's return value is written to
     *         ({@code @ThroughOutbox}), or empty when it returns nothing to an outbox
     */
    public String getOutboxChannel() {
        return outboxChannel;
    }
}
