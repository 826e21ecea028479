package io.quarkiverse.idempotency.deployment;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.jandex.Type;

import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo;
import io.quarkiverse.idempotency.runtime.Redelivery;
import io.quarkiverse.idempotency.runtime.kafka.KafkaChannelCheck;
import io.quarkiverse.idempotency.runtime.kafka.KafkaConnectorSupport;
import io.quarkiverse.idempotency.runtime.kafka.KafkaDeadLetterReplays;
import io.quarkiverse.idempotency.runtime.kafka.KafkaIdempotencyCommitHandlerFactory;
import io.quarkiverse.idempotency.runtime.kafka.KafkaIdempotencyFailureHandlerFactory;
import io.quarkiverse.idempotency.runtime.kafka.KafkaMessageIdReader;
import io.quarkiverse.idempotency.runtime.kafka.KafkaOutgoingIds;
import io.quarkiverse.idempotency.runtime.kafka.UnreadableRecords;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem.ValidationErrorBuildItem;
import io.quarkus.bootstrap.classloading.QuarkusClassLoader;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.BuildSteps;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelBuildItem;

/**
 * Kafka channels ({@code smallrye-kafka}), which cannot requeue one record: a record to try again later is retried in
 * place by the interceptor; the message id is the CloudEvents id, a configured header or the record's position;
 * dead letters go to the channel's dead-letter topic through the idempotency failure strategy, which the build makes
 * every {@code @Idempotent} channel's default. Runs only when the connector is present.
 */
@BuildSteps(onlyIf = KafkaProcessor.Present.class)
class KafkaProcessor {

    /** What a batch consumer of Kafka takes: records with no outcome each. */
    private static final Set<String> BATCH_TYPES = Set.of("java.util.List", "java.util.Collection",
            "io.smallrye.reactive.messaging.kafka.KafkaRecordBatch",
            "org.apache.kafka.clients.consumer.ConsumerRecords");

    @BuildStep
    IdempotentConnectorBuildItem connector() {
        return new IdempotentConnectorBuildItem(KafkaChannelCheck.CONNECTOR, Redelivery.IN_PLACE);
    }

    @BuildStep
    AdditionalBeanBuildItem beans() {
        return AdditionalBeanBuildItem.builder().addBeanClasses(KafkaMessageIdReader.class,
                KafkaIdempotencyFailureHandlerFactory.class, KafkaIdempotencyCommitHandlerFactory.class,
                KafkaConnectorSupport.class, KafkaChannelCheck.class, UnreadableRecords.class, KafkaOutgoingIds.class,
                KafkaDeadLetterReplays.class)
                .setUnremovable().build();
    }

    /**
     * Every Kafka channel consumed by an {@code @Idempotent} method defaults to the idempotency failure and commit
     * strategies; hands a record its deserializer cannot read to {@link UnreadableRecords} (which dead-letters it)
     * instead of stopping the channel; and lets a record wait, retried in place, for as long as its key is held
     * elsewhere or the store is down, without the connector stopping the channel
     * ({@code throttled.unprocessed-record-max-age.ms=0}).
     */
    @BuildStep
    void channelDefaults(IdempotentMethodsBuildItem methods, List<ChannelBuildItem> channels,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        for (String channel : ConnectorChannels.of(KafkaChannelCheck.CONNECTOR, methods, channels)) {
            String prefix = "mp.messaging.incoming." + channel + ".";
            defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "failure-strategy",
                    KafkaIdempotencyFailureHandlerFactory.NAME));
            defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "commit-strategy",
                    KafkaIdempotencyCommitHandlerFactory.NAME));
            defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "fail-on-deserialization-failure",
                    "false"));
            defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix
                    + "throttled.unprocessed-record-max-age.ms", "0"));
        }
    }

    /**
     * A delivery to retry is retried in place by the interceptor, which needs the method's invocation to end with the
     * record's outcome: a batch has no outcome per record; a Message method or a processor settles its message after
     * the invocation, through acknowledgements the interceptor cannot retry.
     */
    @BuildStep
    void validate(ValidationPhaseBuildItem validationPhase, IdempotentMethodsBuildItem methods,
            List<ChannelBuildItem> channels, BuildProducer<ValidationErrorBuildItem> errors) {
        Set<String> kafkaChannels = ConnectorChannels.of(KafkaChannelCheck.CONNECTOR, methods, channels);
        List<Throwable> found = new ArrayList<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            for (String channel : entry.info().getChannels()) {
                if (kafkaChannels.contains(channel)) {
                    String shape = unsupportedShape(entry);
                    if (shape != null) {
                        found.add(new IdempotencyDefinitionException(Rule.ONE_RECORD_AT_A_TIME, "channel=" + channel,
                                entry.info().getDescription(), "Kafka", channel, shape, "Kafka"));
                    }
                    if (MethodFacts.unordered(entry.method()) && !orderedByThrottledCommits(channel)) {
                        found.add(new IdempotencyDefinitionException(Rule.UNORDERED_RECORDS, "channel=" + channel,
                                entry.info().getDescription(), channel, channel));
                    }
                }
            }
        }
        if (!found.isEmpty()) {
            errors.produce(new ValidationErrorBuildItem(found));
        }
    }

    /**
     * Whether the throttled commit strategy hands the channel's records over in order, one at a time per partition (or
     * per record key): {@code throttled.ordered} is {@code partition} or {@code key}, and the strategy that commits is
     * the throttled one (the default), since only it orders records.
     */
    private static boolean orderedByThrottledCommits(String channel) {
        Config config = ConfigProvider.getConfig();
        String prefix = "mp.messaging.incoming." + channel + ".";
        boolean ordered = config.getOptionalValue(prefix + "throttled.ordered", String.class)
                .map(value -> value.equalsIgnoreCase("partition") || value.equalsIgnoreCase("key")).orElse(false);
        String committing = config.getOptionalValue(prefix + KafkaIdempotencyCommitHandlerFactory.DELEGATE_ATTRIBUTE,
                String.class).or(
                        () -> config.getOptionalValue(KafkaIdempotencyCommitHandlerFactory.CONNECTOR_STRATEGY,
                                String.class).filter(s -> !KafkaIdempotencyCommitHandlerFactory.NAME.equals(s)))
                .orElse("throttled");
        return ordered && "throttled".equals(committing);
    }

    private static String unsupportedShape(IdempotentMethodsBuildItem.Entry entry) {
        IdempotentMethodInfo info = entry.info();
        Type parameter = entry.method().parametersCount() == 0 ? null : entry.method().parameterType(0);
        if (parameter != null && (parameter.kind() == Type.Kind.ARRAY
                || BATCH_TYPES.contains(parameter.name().toString()))) {
            return "consumes a batch of records, which has no outcome per record (one busy or poison record would"
                    + " hold or dead-letter the others)";
        }
        if (info.isMessageParameter()) {
            return "takes the Message, which it acknowledges itself";
        }
        if (info.isProcessor()) {
            return "produces a message (@Outgoing), whose acknowledgement comes after the method returned";
        }
        return null;
    }

    static final class Present implements BooleanSupplier {
        @Override
        public boolean getAsBoolean() {
            return QuarkusClassLoader.isClassPresentAtRuntime("io.smallrye.reactive.messaging.kafka.KafkaConnector");
        }
    }
}
