package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.interceptor.InvocationContext;

import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkiverse.idempotency.IdempotencyMode;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkus.arc.Arc;
import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.common.expression.Expression;

/**
 * The plans of every {@code @Idempotent} method, indexed by {@link IdempotentMethodIndex}. A synthetic bean, created
 * at startup from what the build recorded: here each method's settings are resolved per channel (configuration
 * defaults, then the annotation, then {@code quarkus.idempotency.channels."<channel>"}), and a mode the build left to
 * the store ({@code AUTO} with an application's own store) is chosen.
 */
public final class IdempotentMethods {

    private final MethodPlan[] plans;
    private final Set<String> channels;
    private final Set<String> processorChannels;
    private final Map<String, String> connectors;
    private final Map<String, Redelivery> redeliveries;
    private final Duration shortestLease;
    private final Duration longestRetention;

    IdempotentMethods(List<IdempotentMethodInfo> infos, Map<String, String> connectors,
            Map<String, Redelivery> redeliveries, IdempotencyConfig config, boolean storeJoinsTransactions,
            boolean storeCommitsAsynchronously, boolean storeWritesInSessions, boolean storeNeverBlocks,
            NonBlockingStore nonBlocking) {
        this.plans = new MethodPlan[infos.size()];
        this.connectors = Map.copyOf(connectors);
        this.redeliveries = Map.copyOf(redeliveries);
        Set<String> allChannels = new HashSet<>();
        Set<String> processors = new HashSet<>();
        Duration shortest = config.lease();
        // every channel's configured retention too: a scope handled only through Idempotency.handle takes its own
        Duration longest = config.channels().values().stream().flatMap(c -> c.retention().stream())
                .reduce(config.retention(), (a, b) -> a.compareTo(b) >= 0 ? a : b);
        for (int i = 0; i < plans.length; i++) {
            IdempotentMethodInfo info = infos.get(i);
            IdempotencyMode mode = mode(info, storeJoinsTransactions);
            Map<String, DeliveryPolicy> policies = new HashMap<>();
            for (String channel : info.getChannels()) {
                DeliveryPolicy policy = policy(info, channel, config);
                if (policy.asynchronousCommit()) {
                    String refusal = asynchronousCommitRefusal(info, mode, redeliveries.get(channel),
                            storeCommitsAsynchronously);
                    if (refusal != null) {
                        throw new IllegalStateException("quarkus.idempotency.channels.\"" + channel
                                + "\".asynchronous-commit is true, but " + info.getDescription() + " " + refusal
                                + ": a message could be acked before its work is durable. Remove the setting, or make"
                                + " the method a @Transactional one in in-transaction mode that takes the payload");
                    }
                }
                policies.put(channel, policy);
                if (policy.lease().compareTo(shortest) < 0) {
                    shortest = policy.lease();
                }
                if (policy.retention().compareTo(longest) > 0) {
                    longest = policy.retention();
                }
            }
            if (info.isReactiveTransactional()) {
                String refusal = reactiveRefusal(info, mode, redeliveries, storeWritesInSessions, storeNeverBlocks);
                if (refusal != null) {
                    throw new IllegalStateException(info.getDescription() + " runs in a Hibernate Reactive transaction"
                            + " (@WithTransaction) on its event loop, but " + refusal);
                }
            }
            if (!info.getOutboxChannel().isEmpty() && !(mode == IdempotencyMode.IN_TRANSACTION
                    || (mode == IdempotencyMode.LEASE && info.isTransactional() && storeJoinsTransactions))) {
                throw new IllegalStateException(info.getDescription() + " sends its output through the outbox"
                        + " (@ThroughOutbox), written in its transaction, but its key would be settled apart from that"
                        + " transaction (mode = LEASE with a Hibernate Reactive transaction, or a store that cannot"
                        + " write in the method's transaction): the output and the key would not be one commit. Use"
                        + " the database store on the datasource of the method's transaction, in the default mode");
            }
            if (info.isOnEventLoop()) {
                String refusal = eventLoopRefusal(info, redeliveries, nonBlocking);
                if (refusal != null) {
                    throw new IllegalStateException(info.getDescription() + " returns "
                            + (info.getReturns() == IdempotentMethodInfo.Returns.UNI ? "Uni" : "CompletionStage") + " without"
                            + " @Blocking, so it runs on the event loop, where its store calls must not block, but "
                            + refusal);
                }
            }
            if (!info.getScope().isEmpty() && !policies.containsKey(info.getScope())) {
                policies.put(info.getScope(), policies.get(info.getChannels().get(0)));
            }
            plans[i] = new MethodPlan(info.getDescription(),
                    info.getChannels().size() == 1 ? info.getChannels().get(0) : null,
                    info.getScope().isEmpty() ? null : info.getScope(),
                    keyFunction(info.getKeyFunctionClass()), mode, Map.copyOf(policies), info.getReturns(),
                    info.isMessageParameter(), info.isProcessor(), info.isTransactional(),
                    mode == IdempotencyMode.LEASE && info.isTransactional() && storeJoinsTransactions,
                    info.isReactiveTransactional() ? info.getReactivePersistenceUnit() : null,
                    info.isReactiveStateless(), info.isOnEventLoop(),
                    info.getOutboxChannel().isEmpty() ? null : info.getOutboxChannel());
            allChannels.addAll(info.getChannels());
            if (info.isProcessor()) {
                processors.addAll(info.getChannels());
            }
        }
        this.channels = Set.copyOf(allChannels);
        this.processorChannels = Set.copyOf(processors);
        this.shortestLease = shortest;
        this.longestRetention = longest;
    }

    /** @return the plan of the intercepted method, found by the index the build bound to it */
    public MethodPlan plan(InvocationContext ic) {
        return plans[ic.getInterceptorBinding(IdempotentMethodIndex.class).value()];
    }

    /** @return the plans of every {@code @Idempotent} method */
    public List<MethodPlan> plans() {
        return List.of(plans);
    }

    /** @return the channels consumed by {@code @Idempotent} methods */
    public Set<String> channels() {
        return channels;
    }

    /** @return the channels consumed by {@code @Idempotent} processors, whose input acknowledgement is observed */
    public Set<String> processorChannels() {
        return processorChannels;
    }

    /** @return the channels consumed by {@code @Idempotent} methods that a connector feeds */
    public List<String> channelsOf(String connector) {
        return channels.stream().filter(channel -> connector.equals(connectors.get(channel))).sorted().toList();
    }

    /** @return the connector feeding a channel, as the build found it (configured or detected), or {@code null} */
    public String connector(String channel) {
        return connectors.get(channel);
    }

    /**
     * @return whether a delivery of this channel that must be retried (a busy key, a store failure, a failed attempt
     *         within the budget) is retried in place, the message held meanwhile: Kafka cannot requeue one record,
     *         and committing past it would lose it
     */
    public boolean retriesInPlace(String channel) {
        return redeliveries.get(channel) == Redelivery.IN_PLACE;
    }

    /** @return whether a method consuming the channel keys its messages by their message id (the default key) */
    public boolean keyedByMessageId(String channel) {
        for (MethodPlan plan : plans) {
            if (plan.policies().containsKey(channel) && plan.keyFunction() instanceof MessageIdKey) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the longest retention of any method, channel or scope (or the configured one): how far ahead of now the
     *         keys this application's deliveries write from now on may expire (a direct call of the store's API may
     *         pass any)
     */
    public Duration longestRetention() {
        return longestRetention;
    }

    /** @return the shortest lease of any method (or the configured one), which paces lease renewal */
    public Duration shortestLease() {
        return shortestLease;
    }

    // Why a method cannot commit asynchronously and be acked after the flush, or null when it can.
    private static String asynchronousCommitRefusal(IdempotentMethodInfo info, IdempotencyMode mode,
            Redelivery redelivery, boolean storeCommitsAsynchronously) {
        if (!storeCommitsAsynchronously) {
            return "keeps its keys in a store that cannot commit asynchronously (only the database store can)";
        }
        if (mode != IdempotencyMode.IN_TRANSACTION || !info.isTransactional()) {
            return "does not write its key in its own transaction (in-transaction mode, @Transactional)";
        }
        if (info.isMessageParameter() || info.isProcessor() || info.getReturns() != IdempotentMethodInfo.Returns.SYNC) {
            return "acks its messages itself, after an output's ack, or once a stage completes (it takes the Message,"
                    + " has @Outgoing, or returns a Uni or a CompletionStage)";
        }
        if (redelivery == Redelivery.IN_PLACE) {
            return "consumes a channel that retries in place (Kafka)";
        }
        return null;
    }

    // Why a @WithTransaction method cannot have its key written without blocking its event loop, or null when it can.
    private static String reactiveRefusal(IdempotentMethodInfo info, IdempotencyMode mode,
            Map<String, Redelivery> redeliveries, boolean storeWritesInSessions, boolean storeNeverBlocks) {
        if (mode == IdempotencyMode.LEASE && !storeNeverBlocks) {
            return "its key would be claimed on a lease apart from that transaction (mode = LEASE, or a store that"
                    + " cannot write in the handler's transaction), and lease-mode store calls block; use the database"
                    + " store on the handlers' datasource in the default mode, or a blocking @Transactional method";
        }
        if (mode != IdempotencyMode.LEASE && !storeWritesInSessions) {
            return "its key cannot be written in that transaction: the idempotency store is not the database store, the"
                    + " only one that writes keys through a reactive session";
        }
        for (String channel : info.getChannels()) {
            if (redeliveries.get(channel) == Redelivery.IN_PLACE) {
                return "its channel " + channel + " retries failed deliveries in place (Kafka), waiting on the"
                        + " handler's thread, which an event loop must not do; use a blocking @Transactional method"
                        + " there";
            }
        }
        return null;
    }

    // Why a method on the event loop cannot make its store calls there, or null when it can.
    private static String eventLoopRefusal(IdempotentMethodInfo info, Map<String, Redelivery> redeliveries,
            NonBlockingStore nonBlocking) {
        for (String channel : info.getChannels()) {
            if (redeliveries.get(channel) == Redelivery.IN_PLACE) {
                return "its channel " + channel + " retries failed deliveries in place (Kafka), waiting on the"
                        + " handler's thread, which an event loop must not do; annotate the method with @Blocking";
            }
        }
        String unavailable = nonBlocking.unavailable();
        return unavailable == null ? null : unavailable + "; or annotate the method with @Blocking";
    }

    private static IdempotencyMode mode(IdempotentMethodInfo info, boolean storeJoinsTransactions) {
        IdempotencyMode mode = info.getMode();
        if (mode == IdempotencyMode.AUTO) {
            return storeJoinsTransactions ? IdempotencyMode.IN_TRANSACTION : IdempotencyMode.LEASE;
        }
        if (mode == IdempotencyMode.IN_TRANSACTION && !storeJoinsTransactions) {
            throw new IllegalStateException(info.getDescription() + " has @Idempotent(mode = IN_TRANSACTION), but the"
                    + " idempotency store cannot write keys in the handler's transaction (the memory store cannot; the"
                    + " database store cannot when its datasource, quarkus.idempotency.database.datasource, is not"
                    + " the handlers' one); keep the keys on the handlers' datasource, or use mode = LEASE");
        }
        return mode;
    }

    static DeliveryPolicy policy(IdempotentMethodInfo info, String channel, IdempotencyConfig config) {
        IdempotencyConfig.Channel overrides = config.channels().get(channel);
        Duration retention = duration(info, "retention", info.getRetention(), config.retention());
        Duration lease = duration(info, "lease", info.getLease(), config.lease());
        IdempotencyConfig.Retry defaults = config.retry();
        int maxAttempts = info.getMaxAttempts() > 0 ? info.getMaxAttempts() : defaults.maxAttempts();
        Duration initialDelay = defaults.initialDelay();
        Duration maxDelay = defaults.maxDelay();
        double jitter = defaults.jitter();
        boolean asynchronousCommit = false;
        PayloadMismatch payloadMismatch = config.payloadMismatch();
        if (overrides != null) {
            asynchronousCommit = overrides.asynchronousCommit();
            payloadMismatch = overrides.payloadMismatch().orElse(payloadMismatch);
            retention = overrides.retention().orElse(retention);
            lease = overrides.lease().orElse(lease);
            maxAttempts = overrides.retry().maxAttempts().orElse(maxAttempts);
            initialDelay = overrides.retry().initialDelay().orElse(initialDelay);
            maxDelay = overrides.retry().maxDelay().orElse(maxDelay);
            jitter = overrides.retry().jitter().orElse(jitter);
        }
        String where = " for channel " + channel + " of " + info.getDescription();
        positive(retention, "retention" + where);
        positive(lease, "lease" + where);
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("The attempt budget" + where + " is " + maxAttempts
                    + "; it must be at least 1 (quarkus.idempotency.retry.max-attempts,"
                    + " quarkus.idempotency.channels.\"" + channel + "\".retry.max-attempts)");
        }
        if (initialDelay.isNegative() || maxDelay.isNegative() || jitter < 0 || jitter > 1) {
            throw new IllegalArgumentException("The retry delays" + where + " are invalid (initial " + initialDelay
                    + ", max " + maxDelay + ", jitter " + jitter + "): delays must not be negative and the jitter must be"
                    + " from 0 to 1 (quarkus.idempotency.retry.*)");
        }
        RetryPolicy retry = new RetryPolicy(maxAttempts, initialDelay, maxDelay, jitter);
        refuseShortRetention(info, channel, retention, lease, retry, config);
        return new DeliveryPolicy(retention, lease, retry, asynchronousCommit, payloadMismatch);
    }

    /**
     * Refuses a retention that does not outlast a message's retry horizon: the lease (a dead owner's claim is taken
     * over only after it), every delay of the attempt budget at its upper jitter bound, and for a processor the wait for
     * its output's acknowledgement. A key purged inside that horizon forgets the attempts counted on it (a poison message
     * then never reaches the end of its budget) or a claim still held (a concurrent delivery runs the work too).
     */
    private static void refuseShortRetention(IdempotentMethodInfo info, String channel, Duration retention,
            Duration lease, RetryPolicy retry, IdempotencyConfig config) {
        Duration delays = retry.longestWait();
        Duration horizon = lease.plus(delays);
        String outputAck = "";
        if (info.isProcessor()) {
            horizon = horizon.plus(config.outputAckTimeout());
            outputAck = " + the output-ack timeout " + config.outputAckTimeout();
        }
        if (retention.compareTo(horizon) <= 0) {
            throw new IllegalArgumentException("The retention for channel " + channel + " of " + info.getDescription()
                    + " is " + retention + ", not longer than the time a message of it can still come back: the lease "
                    + lease + " + the delays of " + retry.maxAttempts() + " attempts at their longest (" + delays + ")"
                    + outputAck + " = " + horizon + ". A key purged before that forgets the attempts counted on it (a"
                    + " poison message would never be dead-lettered) or a claim still held (a duplicate would run). Raise"
                    + " the retention above " + horizon + " (quarkus.idempotency.retention, quarkus.idempotency.channels.\""
                    + channel + "\".retention, @Idempotent(retention)), or shorten the lease or the retry delays"
                    + " (quarkus.idempotency.lease, quarkus.idempotency.retry.*)");
        }
    }

    private static void positive(Duration duration, String what) {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("The " + what + " is " + duration + "; it must be positive");
        }
    }

    // An annotation value: a duration, or a configuration expression (${payments.retention:48h}) resolved now.
    private static Duration duration(IdempotentMethodInfo info, String member, String value, Duration fallback) {
        if (value.isEmpty()) {
            return fallback;
        }
        String resolved = value;
        if (value.contains("${")) {
            var config = ConfigProvider.getConfig();
            resolved = Expression.compile(value).evaluate((context, builder) -> {
                var configured = config.getOptionalValue(context.getKey(), String.class);
                if (configured.isPresent()) {
                    builder.append(configured.get());
                } else if (context.hasDefault()) {
                    context.expandDefault();
                } else {
                    throw new IllegalArgumentException("@Idempotent(" + member + " = \"" + value + "\") of "
                            + info.getDescription() + " names the configuration property " + context.getKey()
                            + ", which is not set; set it, or give a default: ${" + context.getKey() + ":24h}");
                }
            });
        }
        try {
            return DurationConverter.parseDuration(resolved.trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("@Idempotent(" + member + " = \"" + value + "\") of "
                    + info.getDescription() + " is not a duration" + (resolved.equals(value) ? ""
                            : " (it resolves to '"
                                    + resolved + "')")
                    + "; use an ISO-8601 duration (PT30M) or a Quarkus shorthand (30m, 24h, 7d)", e);
        }
    }

    @SuppressWarnings("unchecked")
    private static KeyFunction<Object> keyFunction(String className) {
        try {
            Class<?> type = Thread.currentThread().getContextClassLoader().loadClass(className);
            return (KeyFunction<Object>) Arc.container().instance(type).get();
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("Key function class " + className + " cannot be loaded", e);
        }
    }
}
