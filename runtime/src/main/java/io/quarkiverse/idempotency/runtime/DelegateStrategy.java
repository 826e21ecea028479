package io.quarkiverse.idempotency.runtime;

import jakarta.enterprise.inject.Instance;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import io.smallrye.common.annotation.Identifier;

/**
 * The strategy one of the extension's connector strategies hands its work to: for the failure strategies, the failures
 * the extension does not map; for the Kafka commit strategy, the committing. It is named by a channel attribute, else
 * by the connector-wide property (which the channel-level default set by the build would hide), else it is the
 * connector's own default.
 *
 * @param kind what is delegated, for messages ({@code failure strategy}, {@code commit strategy})
 * @param attribute the channel attribute naming the delegate
 * @param connectorWideKey the connector-wide property naming it
 * @param connector the connector's name, for messages
 * @param fallback the delegate when neither is set
 * @param choices the delegates to suggest
 */
public record DelegateStrategy(String kind, String attribute, String connectorWideKey, String connector,
        String fallback, String choices) {

    /** The name of the extension's strategies, as given to {@code failure-strategy} or {@code commit-strategy}. */
    public static final String IDEMPOTENCY = "idempotency";

    /** The channel attribute naming the failure strategy for failures the extension does not map. */
    public static final String ATTRIBUTE = "idempotency.failure-strategy";

    /**
     * @param config the application's configuration
     * @param channel an incoming channel with {@code @Idempotent} methods
     * @return the channel's {@code failure-strategy} when it names another strategy than the extension's (whose
     *         outcomes would then not reach the broker), else {@code null}
     */
    public static String otherFailureStrategy(Config config, String channel) {
        return config.getOptionalValue("mp.messaging.incoming." + channel + ".failure-strategy", String.class)
                .filter(strategy -> !IDEMPOTENCY.equals(strategy)).orElse(null);
    }

    /**
     * @param channel the channel (its {@code @Incoming} name)
     * @param channelConfig the channel's attributes, as the connector sees them
     * @return the delegate's name
     * @throws IllegalArgumentException when it names the idempotency strategy itself
     */
    public String name(String channel, Config channelConfig) {
        String name = channelConfig.getOptionalValue(attribute, String.class)
                .or(() -> ConfigProvider.getConfig().getOptionalValue(connectorWideKey, String.class)
                        .filter(s -> !IDEMPOTENCY.equals(s)))
                .orElse(fallback);
        if (IDEMPOTENCY.equals(name)) {
            throw new IllegalArgumentException("mp.messaging.incoming." + channel + "." + attribute
                    + " names the idempotency strategy itself; name the one it hands over to (" + choices + ")");
        }
        return name;
    }

    /**
     * @param factories the connector's strategies, each {@code @Identifier}-qualified by its name
     * @param name the strategy's name
     * @param channel the channel, for the message
     * @return the strategy's factory
     * @throws IllegalArgumentException naming the choices when no strategy has that name
     */
    public <F> F factory(Instance<F> factories, String name, String channel) {
        Instance<F> factory = factories.select(Identifier.Literal.of(name));
        if (!factory.isResolvable()) {
            throw new IllegalArgumentException("The " + kind + " '" + name + "' of channel " + channel
                    + " (mp.messaging.incoming." + channel + "." + attribute + " or " + connectorWideKey + ") names no "
                    + connector + " " + kind + "; use " + choices);
        }
        return factory.get();
    }

    /** @return the factory of the channel's delegate: {@link #factory} of {@link #name} */
    public <F> F factory(Instance<F> factories, String channel, Config channelConfig) {
        return factory(factories, name(channel, channelConfig), channel);
    }
}
