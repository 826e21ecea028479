package io.quarkiverse.idempotency.runtime;

import java.util.List;

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
    private final String retention;
    private final String claimTimeout;
    private final Returns returns;
    private final boolean messageParameter;
    private final boolean processor;
    private final boolean transactional;
    private final boolean claimInTransaction;

    @RecordableConstructor
    public IdempotentMethodInfo(String description, List<String> channels, String scope, String keyFunctionClass,
            String retention, String claimTimeout, Returns returns, boolean messageParameter, boolean processor,
            boolean transactional, boolean claimInTransaction) {
        this.description = description;
        this.channels = channels;
        this.scope = scope;
        this.keyFunctionClass = keyFunctionClass;
        this.retention = retention;
        this.claimTimeout = claimTimeout;
        this.returns = returns;
        this.messageParameter = messageParameter;
        this.processor = processor;
        this.transactional = transactional;
        this.claimInTransaction = claimInTransaction;
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

    /** @return the explicit retention, or empty for the configured default */
    public String getRetention() {
        return retention;
    }

    /** @return the explicit claim timeout, or empty for the configured default */
    public String getClaimTimeout() {
        return claimTimeout;
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

    /** @return whether the method runs in a JTA transaction ({@code @Transactional}) */
    public boolean isTransactional() {
        return transactional;
    }

    /** @return whether the key is claimed inside the method's transaction (the opt-in mode) */
    public boolean isClaimInTransaction() {
        return claimInTransaction;
    }
}
