package io.quarkiverse.idempotency.runtime.rabbitmq;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkus.runtime.StartupEvent;

/**
 * Warns at startup about a RabbitMQ channel of an {@code @Idempotent} method whose {@code failure-strategy} was set
 * to something else than the idempotency strategy: its busy and store-failure outcomes would then not be requeued
 * after a delay, nor keyless messages dead-lettered.
 */
@Singleton
public class FailureStrategyCheck {

    private static final Logger LOG = Logger.getLogger(FailureStrategyCheck.class);

    void check(@Observes StartupEvent event, IdempotentMethods methods) {
        Config config = ConfigProvider.getConfig();
        for (String channel : methods.channels()) {
            String prefix = "mp.messaging.incoming." + channel + ".";
            if (!"smallrye-rabbitmq".equals(config.getOptionalValue(prefix + "connector", String.class).orElse(null))) {
                continue;
            }
            String strategy = config.getOptionalValue(prefix + "failure-strategy", String.class).orElse(null);
            if (strategy != null && !IdempotencyFailureHandlerFactory.NAME.equals(strategy)) {
                LOG.warnf("Channel %s has @Idempotent methods but %sfailure-strategy=%s, so idempotency outcomes are"
                        + " not mapped to the broker (keyless messages are not dead-lettered, busy ones not requeued"
                        + " after a delay). Remove that setting and put %s%s=%s instead: the idempotency strategy"
                        + " hands handler failures to it", channel, prefix, strategy, prefix,
                        IdempotencyFailureHandlerFactory.DELEGATE_ATTRIBUTE, strategy);
            }
        }
    }
}
