package io.quarkiverse.idempotency.runtime;

import jakarta.enterprise.inject.Instance;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import io.smallrye.common.annotation.Identifier;

/**
 * The failure strategy a connector's idempotency strategy hands the failures it does not map to: the channel's
 * {@value #ATTRIBUTE} attribute, else the connector-wide {@code failure-strategy} (which the channel-level default set
 * by the build would hide), else the connector's own default.
 */
public final class DelegateStrategy {

    /** The name of the idempotency failure strategy, as given to {@code failure-strategy}. */
    public static final String IDEMPOTENCY = "idempotency";

    /** The channel attribute naming the strategy for failures the extension does not map. */
    public static final String ATTRIBUTE = "idempotency.failure-strategy";

    private DelegateStrategy() {
    }

    /**
     * @param channel the channel
     * @param channelConfig the channel's attributes, as the connector sees them
     * @param connectorWideKey the connector-wide failure strategy's key
     * @param fallback the strategy when neither is set
     * @param choices the strategies to suggest when the idempotency strategy names itself
     * @return the delegate strategy's name
     */
    public static String name(String channel, Config channelConfig, String connectorWideKey, String fallback,
            String choices) {
        String name = channelConfig.getOptionalValue(ATTRIBUTE, String.class)
                .or(() -> ConfigProvider.getConfig().getOptionalValue(connectorWideKey, String.class)
                        .filter(s -> !IDEMPOTENCY.equals(s)))
                .orElse(fallback);
        if (IDEMPOTENCY.equals(name)) {
            throw new IllegalArgumentException("mp.messaging.incoming." + channel + "." + ATTRIBUTE
                    + " names the idempotency strategy itself; name the strategy for the failures it does not map ("
                    + choices + ")");
        }
        return name;
    }

    /**
     * @param factories the connector's failure strategies, each {@code @Identifier}-qualified by its name
     * @param name the strategy's name
     * @return the strategy's factory
     * @throws IllegalArgumentException naming the choices when no strategy has that name
     */
    public static <F> F factory(Instance<F> factories, String name, String channel, String connectorWideKey,
            String connector, String choices) {
        Instance<F> factory = factories.select(Identifier.Literal.of(name));
        if (!factory.isResolvable()) {
            throw new IllegalArgumentException("The failure strategy '" + name + "' of channel " + channel
                    + " (mp.messaging.incoming." + channel + "." + ATTRIBUTE + " or " + connectorWideKey + ") names no "
                    + connector + " failure strategy; use " + choices);
        }
        return factory.get();
    }
}
