package io.quarkiverse.idempotency.runtime.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkiverse.idempotency.runtime.DelegateStrategy;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkiverse.idempotency.runtime.MethodPlan;
import io.quarkiverse.idempotency.runtime.RetryPolicy;
import io.quarkus.runtime.StartupEvent;

/**
 * Refuses, at startup, Kafka channels of {@code @Idempotent} methods set up so that an offset could be committed past
 * a record that was not handled, or so that a record's retries would outlast what the connector tolerates: a
 * {@code failure-strategy} other than the idempotency strategy ({@code ignore} commits past a failure),
 * {@code enable.auto.commit=true} (offsets committed as records are polled, handled or not), batch consumption (one
 * outcome per record is needed), and an attempt budget whose waits add up to more than
 * {@code throttled.unprocessed-record-max-age.ms} (the connector would stop the channel while a record is retried in
 * place). Every problem is reported at once, each with the properties to set.
 */
@Singleton
public class KafkaChannelCheck {

    /** The Kafka connector's name. */
    public static final String CONNECTOR = "smallrye-kafka";
    /** SmallRye's default for {@code throttled.unprocessed-record-max-age.ms}. */
    static final int DEFAULT_MAX_AGE_MS = 60_000;

    void check(@Observes StartupEvent event, IdempotentMethods methods) {
        Config config = ConfigProvider.getConfig();
        List<String> problems = new ArrayList<>();
        for (String channel : methods.channels()) {
            if (!CONNECTOR.equals(methods.connector(channel))) {
                continue;
            }
            String prefix = "mp.messaging.incoming." + channel + ".";
            String strategy = config.getOptionalValue(prefix + "failure-strategy", String.class)
                    .orElse(KafkaIdempotencyFailureHandlerFactory.NAME);
            if (!KafkaIdempotencyFailureHandlerFactory.NAME.equals(strategy)) {
                problems.add("Channel " + channel + " has @Idempotent methods but " + prefix + "failure-strategy="
                        + strategy + ", so their outcomes are not mapped to Kafka (" + ("ignore".equals(strategy)
                                ? "a failed record's offset would be committed past it, and the record lost"
                                : "a spent retry budget or a missing key would not reach the dead-letter topic")
                        + "). Remove that property: handler failures are retried by quarkus.idempotency.retry.*, and "
                        + prefix + DelegateStrategy.ATTRIBUTE
                        + " names the strategy for the failures the extension does not map");
            }
            if (attribute(config, channel, "enable.auto.commit").map(Boolean::parseBoolean).orElse(false)) {
                problems.add("Channel " + channel + " has @Idempotent methods but enable.auto.commit=true: the Kafka"
                        + " client commits offsets as it polls records, handled or not, so a record retried or still"
                        + " running when the process dies is lost. Remove enable.auto.commit (the connector then"
                        + " commits only what was acknowledged)");
            }
            if (attribute(config, channel, "batch").map(Boolean::parseBoolean).orElse(false)) {
                problems.add("Channel " + channel + " has @Idempotent methods but " + prefix + "batch=true: a batch"
                        + " has no outcome per record (one busy or poison record would hold or dead-letter the rest)."
                        + " Consume single records");
            }
            String commit = attribute(config, channel, "commit-strategy").orElse("throttled");
            int maxAge = attribute(config, channel, "throttled.unprocessed-record-max-age.ms").map(Integer::parseInt)
                    .orElse(DEFAULT_MAX_AGE_MS);
            if ("throttled".equals(commit) && maxAge > 0) {
                for (MethodPlan plan : methods.plans()) {
                    if (!plan.policies().containsKey(channel)) {
                        continue;
                    }
                    RetryPolicy retry = plan.policy(channel).retry();
                    Duration wait = retry.longestWait();
                    if (wait.toMillis() >= maxAge) {
                        problems.add("@Idempotent " + plan.description() + " retries a failed record of channel "
                                + channel + " in place for up to " + wait.toSeconds() + " s (" + retry.maxAttempts()
                                + " attempts), but the connector stops a channel whose record waits longer than "
                                + prefix + "throttled.unprocessed-record-max-age.ms=" + maxAge + ". Lower"
                                + " quarkus.idempotency.retry.max-attempts or max-delay (or the channel's, or the"
                                + " annotation's), or raise that property");
                    }
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new IllegalStateException(String.join("\n", problems));
        }
    }

    // A channel attribute, else the connector-wide one, else Quarkus's kafka.* defaults for every channel.
    private static Optional<String> attribute(Config config, String channel, String name) {
        return config.getOptionalValue("mp.messaging.incoming." + channel + "." + name, String.class)
                .or(() -> config.getOptionalValue("mp.messaging.connector." + CONNECTOR + "." + name, String.class))
                .or(() -> config.getOptionalValue("kafka." + name, String.class));
    }
}
