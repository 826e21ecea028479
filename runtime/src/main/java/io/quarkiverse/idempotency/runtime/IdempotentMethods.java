package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.quarkiverse.idempotency.KeyFunction;
import io.quarkus.arc.Arc;
import io.quarkus.runtime.configuration.DurationConverter;

/**
 * The plans of every {@code @Idempotent} method, indexed by {@link IdempotentMethodIndex}. A synthetic bean, created
 * at startup from what the build recorded.
 */
public final class IdempotentMethods {

    private final MethodPlan[] plans;
    private final Set<String> channels;
    private final Duration shortestClaimTimeout;

    IdempotentMethods(List<IdempotentMethodInfo> infos, IdempotencyConfig config) {
        this.plans = new MethodPlan[infos.size()];
        Set<String> allChannels = new HashSet<>();
        Duration shortest = config.claimTimeout();
        for (int i = 0; i < plans.length; i++) {
            IdempotentMethodInfo info = infos.get(i);
            Duration claimTimeout = duration(info.getClaimTimeout(), config.claimTimeout());
            plans[i] = new MethodPlan(info.getDescription(),
                    info.getChannels().size() == 1 ? info.getChannels().get(0) : null,
                    info.getScope().isEmpty() ? null : info.getScope(),
                    keyFunction(info.getKeyFunctionClass()),
                    duration(info.getRetention(), config.retention()),
                    claimTimeout,
                    info.getReturns(), info.isMessageParameter(), info.isProcessor(), info.isTransactional(),
                    info.isClaimInTransaction());
            allChannels.addAll(info.getChannels());
            if (claimTimeout.compareTo(shortest) < 0) {
                shortest = claimTimeout;
            }
        }
        this.channels = Set.copyOf(allChannels);
        this.shortestClaimTimeout = shortest;
    }

    /** @return the plan at the index the build gave the method */
    public MethodPlan plan(int index) {
        return plans[index];
    }

    /** @return the plans of every {@code @Idempotent} method */
    public List<MethodPlan> plans() {
        return List.of(plans);
    }

    /** @return the channels consumed by {@code @Idempotent} methods */
    public Set<String> channels() {
        return channels;
    }

    /** @return the shortest claim timeout of any method (or the configured one), which paces claim renewal */
    public Duration shortestClaimTimeout() {
        return shortestClaimTimeout;
    }

    private static Duration duration(String value, Duration fallback) {
        return value.isEmpty() ? fallback : DurationConverter.parseDuration(value);
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
