package io.quarkiverse.idempotency.runtime;

import java.util.Map;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.KeyFunction;

/**
 * Everything the interceptors need to know about one {@code @Idempotent} method, resolved once at startup; and one
 * thing learnt later: that the method's transaction is on another datasource than the keys, which the build cannot
 * see (see {@link #workOnAnotherDataSource}).
 */
public final class MethodPlan {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(MethodPlan.class);

    private final String description;
    private final String singleChannel;
    private final String scope;
    private final KeyFunction<Object> keyFunction;
    private final IdempotencyMode mode;
    private final Map<String, DeliveryPolicy> policies;
    private final IdempotentMethodInfo.Returns returns;
    private final boolean messageParameter;
    private final boolean processor;
    private final boolean transactional;
    private final boolean confirmsInTransaction;
    private final String persistenceUnit;
    private final boolean statelessSession;
    private final boolean onEventLoop;
    private final String outboxChannel;
    private volatile boolean keysApart;

    /**
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
    public MethodPlan(String description, String singleChannel, String scope, KeyFunction<Object> keyFunction,
            IdempotencyMode mode, Map<String, DeliveryPolicy> policies, IdempotentMethodInfo.Returns returns,
            boolean messageParameter, boolean processor, boolean transactional, boolean confirmsInTransaction) {
        this(description, singleChannel, scope, keyFunction, mode, policies, returns, messageParameter, processor,
                transactional, confirmsInTransaction, null, false);
    }

    /**
     * {@link #MethodPlan(String, String, String, KeyFunction, IdempotencyMode, Map, IdempotentMethodInfo.Returns,
     * boolean, boolean, boolean, boolean)} of a method that starts a Hibernate Reactive transaction
     * ({@code @WithTransaction}).
     *
     * @param persistenceUnit its persistence unit, or {@code null} when the method has no reactive transaction
     * @param statelessSession whether its transaction is a stateless session's
     */
    public MethodPlan(String description, String singleChannel, String scope, KeyFunction<Object> keyFunction,
            IdempotencyMode mode, Map<String, DeliveryPolicy> policies, IdempotentMethodInfo.Returns returns,
            boolean messageParameter, boolean processor, boolean transactional, boolean confirmsInTransaction,
            String persistenceUnit, boolean statelessSession) {
        this(description, singleChannel, scope, keyFunction, mode, policies, returns, messageParameter, processor,
                transactional, confirmsInTransaction, persistenceUnit, statelessSession, false);
    }

    /**
     * {@link #MethodPlan(String, String, String, KeyFunction, IdempotencyMode, Map, IdempotentMethodInfo.Returns,
     * boolean, boolean, boolean, boolean, String, boolean)} of a method that may run on the event loop.
     *
     * @param onEventLoop whether the method returns {@code Uni} or {@code CompletionStage} without {@code @Blocking} or a
     *        reactive transaction: its lease-mode store calls are then made without blocking ({@link KeyCalls})
     */
    public MethodPlan(String description, String singleChannel, String scope, KeyFunction<Object> keyFunction,
            IdempotencyMode mode, Map<String, DeliveryPolicy> policies, IdempotentMethodInfo.Returns returns,
            boolean messageParameter, boolean processor, boolean transactional, boolean confirmsInTransaction,
            String persistenceUnit, boolean statelessSession, boolean onEventLoop) {
        this(description, singleChannel, scope, keyFunction, mode, policies, returns, messageParameter, processor,
                transactional, confirmsInTransaction, persistenceUnit, statelessSession, onEventLoop, null);
    }

    /**
     * {@link #MethodPlan(String, String, String, KeyFunction, IdempotencyMode, Map, IdempotentMethodInfo.Returns,
     * boolean, boolean, boolean, boolean, String, boolean, boolean)} of a method whose output goes through an outbox.
     *
     * @param outboxChannel the channel whose outbox the method's return value is written to, in its transaction
     *        ({@code @ThroughOutbox}), or {@code null}
     */
    public MethodPlan(String description, String singleChannel, String scope, KeyFunction<Object> keyFunction,
            IdempotencyMode mode, Map<String, DeliveryPolicy> policies, IdempotentMethodInfo.Returns returns,
            boolean messageParameter, boolean processor, boolean transactional, boolean confirmsInTransaction,
            String persistenceUnit, boolean statelessSession, boolean onEventLoop, String outboxChannel) {
        this.outboxChannel = outboxChannel;
        this.onEventLoop = onEventLoop;
        this.persistenceUnit = persistenceUnit;
        this.statelessSession = statelessSession;
        this.description = description;
        this.singleChannel = singleChannel;
        this.scope = scope;
        this.keyFunction = keyFunction;
        this.mode = mode;
        this.policies = policies;
        this.returns = returns;
        this.messageParameter = messageParameter;
        this.processor = processor;
        this.transactional = transactional;
        this.confirmsInTransaction = confirmsInTransaction;
    }

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

    /**
     * @return the channel whose outbox the method's return value is written to in its transaction
     *         ({@code @ThroughOutbox}), or {@code null}
     */
    public String outboxChannel() {
        return outboxChannel;
    }

    /** @return whether the key is written in the method's own transaction */
    public boolean inTransaction() {
        return mode == IdempotencyMode.IN_TRANSACTION && !keysApart;
    }

    /**
     * @return whether the key is written in the method's own Hibernate Reactive transaction, through its session, on
     *         its event loop ({@code @WithTransaction} in in-transaction mode)
     */
    public boolean inReactiveTransaction() {
        return persistenceUnit != null && mode == IdempotencyMode.IN_TRANSACTION;
    }

    /**
     * @return whether the method may run on the event loop (asynchronous, not {@code @Blocking}, no reactive
     *         transaction): its delivery calls the store without blocking when it does
     */
    public boolean onEventLoop() {
        return onEventLoop;
    }

    /** @return the persistence unit of the method's reactive transaction */
    public String persistenceUnit() {
        return persistenceUnit;
    }

    /** @return whether the method's reactive transaction is a stateless session's */
    public boolean statelessSession() {
        return statelessSession;
    }

    /** @return whether a lease-mode claim is confirmed inside the method's transaction */
    public boolean confirmsInTransaction() {
        return (confirmsInTransaction || mode == IdempotencyMode.IN_TRANSACTION) && !keysApart;
    }

    /**
     * The method's transaction could not take the store's statements: its work is on another datasource than the keys
     * (two non-XA resources in one transaction are refused). From now on its key is claimed and confirmed on the keys'
     * datasource on its own, on a lease: two commits per message, and a crash between the work's commit and the
     * confirm lets a redelivery run it again once the lease ran out. Said once, with the remedy.
     */
    void workOnAnotherDataSource(Throwable refusal) {
        if (!keysApart) {
            keysApart = true;
            LOG.workOnAnotherDataSource(description, refusal);
        }
    }

    public String description() {
        return description;
    }

    public String singleChannel() {
        return singleChannel;
    }

    public String scope() {
        return scope;
    }

    public KeyFunction<Object> keyFunction() {
        return keyFunction;
    }

    public IdempotencyMode mode() {
        return mode;
    }

    public Map<String, DeliveryPolicy> policies() {
        return policies;
    }

    public IdempotentMethodInfo.Returns returns() {
        return returns;
    }

    public boolean messageParameter() {
        return messageParameter;
    }

    public boolean processor() {
        return processor;
    }

    public boolean transactional() {
        return transactional;
    }
}
