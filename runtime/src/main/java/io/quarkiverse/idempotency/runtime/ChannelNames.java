package io.quarkiverse.idempotency.runtime;

import java.util.Set;

import io.smallrye.reactive.messaging.providers.impl.ConcurrencyConnectorConfig;

/**
 * Channel names as a connector reports them. A channel consumed with {@code concurrency=N} is N copies, each named
 * {@code <channel>$<i>} where the connector and its decorators see it; the {@code @Incoming} method, its scope and its
 * settings know only {@code <channel>}.
 */
public final class ChannelNames {

    private ChannelNames() {
    }

    /**
     * @param name a channel name as a connector or a decorator sees it
     * @param known the channels of {@code @Incoming} methods
     * @return the {@code @Incoming} channel it belongs to, or {@code null} when none
     */
    public static String incoming(String name, Set<String> known) {
        if (known.contains(name)) {
            return name;
        }
        if (ConcurrencyConnectorConfig.isConcurrencyChannelName(name)) {
            String base = ConcurrencyConnectorConfig.stripChannelNameOfSeparator(name);
            return known.contains(base) ? base : null;
        }
        return null;
    }

    /** @return the {@code @Incoming} channel a connector's copy of a channel belongs to */
    public static String incoming(String name) {
        return ConcurrencyConnectorConfig.isConcurrencyChannelName(name)
                ? ConcurrencyConnectorConfig.stripChannelNameOfSeparator(name)
                : name;
    }
}
