package io.quarkiverse.idempotency.runtime.kafka;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkiverse.idempotency.runtime.DelegateStrategy;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkus.runtime.StartupEvent;

/**
 * Refuses, at startup, Kafka channels of {@code @Idempotent} methods set up so that an offset could be committed past
 * a record that was not handled, or so that a record's retries would outlast what the connector tolerates: a
 * {@code failure-strategy} other than the idempotency strategy ({@code ignore} commits past a failure),
 * {@code enable.auto.commit=true} (offsets committed as records are polled, handled or not), batch consumption (one
 * outcome per record is needed), {@code fail-on-deserialization-failure=true} (an unreadable record would stop the
 * channel), a {@code commit-strategy} that hides rebalances from the extension, and a positive
 * {@code throttled.unprocessed-record-max-age.ms} (the connector would stop the channel while a record waits, retried in
 * place). Every problem is reported at once, each with the properties to set. Also says which channels key records by
 * their position.
 */
@Singleton
public class KafkaChannelCheck {

    /** The Kafka connector's name. */
    public static final String CONNECTOR = "smallrye-kafka";
    private static final IdempotencyLogger LOG = IdempotencyLogger.of(KafkaChannelCheck.class);

    void check(@Observes StartupEvent event, IdempotentMethods methods, IdempotencyConfig idempotency) {
        String idHeader = idempotency.kafka().idHeader().orElse(null);
        Config config = ConfigProvider.getConfig();
        List<String> problems = new ArrayList<>();
        for (String channel : methods.channelsOf(CONNECTOR)) {
            String prefix = "mp.messaging.incoming." + channel + ".";
            String strategy = DelegateStrategy.otherFailureStrategy(config, channel);
            if (strategy != null) {
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
            if (attribute(config, channel, "fail-on-deserialization-failure").map(Boolean::parseBoolean).orElse(false)) {
                problems.add("Channel " + channel + " has @Idempotent methods but " + prefix
                        + "fail-on-deserialization-failure=true: a record its deserializer cannot read would stop the"
                        + " channel instead of being dead-lettered, and every record behind it would wait until the"
                        + " application is fixed. Remove that property (the extension sets it to false on its channels"
                        + " and dead-letters such a record, its bytes intact)");
            }
            String commit = config.getOptionalValue(prefix + "commit-strategy", String.class)
                    .orElse(KafkaIdempotencyCommitHandlerFactory.NAME);
            if (!KafkaIdempotencyCommitHandlerFactory.NAME.equals(commit)) {
                problems.add("Channel " + channel + " has @Idempotent methods but " + prefix + "commit-strategy="
                        + commit + ", which hides the rebalances from the extension (a record retried in place after"
                        + " its partition was revoked would be retried by two consumers). Remove that property, and set "
                        + prefix + KafkaIdempotencyCommitHandlerFactory.DELEGATE_ATTRIBUTE + "=" + commit
                        + " instead: that strategy still does the committing");
            }
            int maxAge = config.getOptionalValue(prefix + "throttled.unprocessed-record-max-age.ms", Integer.class)
                    .orElse(0);
            if (maxAge > 0) {
                problems.add("Channel " + channel + " has @Idempotent methods but " + prefix
                        + "throttled.unprocessed-record-max-age.ms=" + maxAge + ": a record retried in place waits for as"
                        + " long as its key is held by another delivery or the store is down, and the connector would"
                        + " stop the channel past that age. Remove that property (the extension sets it to 0 on its"
                        + " channels; the idempotency store's readiness check reports a store outage)");
            }
            if (methods.keyedByMessageId(channel)) {
                LOG.keyedByPosition(channel,
                        idHeader == null ? "an id header"
                                : "the header " + idHeader + " (quarkus.idempotency.kafka.id-header)");
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
