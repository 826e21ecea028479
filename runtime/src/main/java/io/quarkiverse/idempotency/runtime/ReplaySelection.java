package io.quarkiverse.idempotency.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import io.quarkiverse.idempotency.ScopedKey;

/**
 * Which dead letters a replay moves back, read from their {@link DeadLetterHeaders} on any connector: those of its
 * channel whose reason contains the text asked for (ignoring case), and the key each one's release frees.
 */
public final class ReplaySelection {

    /** The header the RabbitMQ failure handler counts a message's requeues with. */
    private static final String REQUEUED = "x-idempotency-requeued";

    private final String channel;
    private final String reason;
    private final List<String> scopes;
    private final Duration retention;

    private ReplaySelection(String channel, String reason, List<String> scopes, Duration retention) {
        this.channel = channel;
        this.reason = reason;
        this.scopes = scopes;
        this.retention = retention;
    }

    /** @param reason the text a dead letter's reason contains, or {@code null} for all */
    public static ReplaySelection of(String channel, String reason, IdempotentMethods methods) {
        List<String> scopes = new ArrayList<>();
        Duration retention = null;
        for (MethodPlan plan : methods.plans()) {
            DeliveryPolicy policy = plan.policies().get(channel);
            if (policy != null) {
                scopes.add(plan.scope() != null ? plan.scope() : channel);
                retention = retention == null || policy.retention().compareTo(retention) < 0 ? policy.retention()
                        : retention;
            }
        }
        scopes.sort((a, b) -> b.length() - a.length()); // the longest first: a scope may contain ':'
        return new ReplaySelection(channel, reason == null || reason.isBlank() ? null : reason.toLowerCase(Locale.ROOT),
                scopes, retention == null ? Duration.ZERO : retention);
    }

    /** @param header a dead letter's header by name, as text, or {@code null} */
    public boolean matches(Function<String, String> header) {
        if (!channel.equals(header.apply(DeadLetterHeaders.CHANNEL))) {
            return false; // not a dead letter of this channel (a dead-letter queue two channels share)
        }
        String why = header.apply(DeadLetterHeaders.REASON);
        return reason == null || (why != null && why.toLowerCase(Locale.ROOT).contains(reason));
    }

    /**
     * @return the key the dead letter names ({@value DeadLetterHeaders#KEY} is {@code <scope>:<key>}), or {@code null}
     *         when it names none of the channel's scopes (a message whose key could not be read) or the header was
     *         cut at its length limit (a key of 1,000 characters or more, which the header does not hold whole)
     */
    public ScopedKey key(Function<String, String> header) {
        String key = header.apply(DeadLetterHeaders.KEY);
        if (key != null && !DeadLetterHeaders.truncated(key)) {
            for (String scope : scopes) {
                if (key.startsWith(scope + ":")) {
                    return new ScopedKey(scope, key.substring(scope.length() + 1));
                }
            }
        }
        return null;
    }

    /**
     * @return whether a replayed copy leaves this header out: it said why and how the message was dead-lettered (the
     *         extension's {@link DeadLetterHeaders}, SmallRye's {@code dead-letter-*}, RabbitMQ's {@code x-death}...)
     *         or how often it was requeued; every other header, the message's ids among them, stays
     */
    public static boolean deadLetterHeader(String name) {
        return DeadLetterHeaders.NAMES.contains(name) || name.equals(REQUEUED) || name.startsWith("dead-letter-")
                || name.equals("x-death") || name.startsWith("x-first-death-") || name.startsWith("x-last-death-")
                || name.equals("x-delivery-count");
    }

    /**
     * @return the shortest retention of the channel's methods: how long the store remembers that a key was handled
     */
    public Duration retention() {
        return retention;
    }

    public String channel() {
        return channel;
    }
}
