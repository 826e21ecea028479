package io.quarkiverse.idempotency.deployment;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTarget;
import org.jboss.jandex.DotName;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.Type;

import io.quarkiverse.idempotency.OutboxEmitter;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.health.OutboxHealthCheck;
import io.quarkiverse.idempotency.runtime.kafka.KafkaChannelCheck;
import io.quarkiverse.idempotency.runtime.micrometer.MicrometerOutboxMetrics;
import io.quarkiverse.idempotency.runtime.outbox.OutboxEmitterFactory;
import io.quarkiverse.idempotency.runtime.outbox.OutboxProducer;
import io.quarkiverse.idempotency.runtime.outbox.OutboxRelayJob;
import io.quarkiverse.idempotency.runtime.outbox.OutboxStartup;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQChannelCheck;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem.ValidationErrorBuildItem;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.deployment.builditem.nativeimage.NativeImageResourceBuildItem;
import io.quarkus.deployment.builditem.nativeimage.ReflectiveHierarchyBuildItem;
import io.quarkus.deployment.metrics.MetricsCapabilityBuildItem;
import io.quarkus.runtime.metrics.MetricsFactory;
import io.quarkus.smallrye.health.deployment.spi.HealthBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.InjectedEmitterBuildItem;

/**
 * The transactional outbox, registered only when the application injects an {@code OutboxEmitter}: its emitter
 * factory, its table, its relay job; its channels default to waiting for the broker's confirm; the payload types of
 * its injection points are kept for reflection in native images (they are read back from JSON).
 */
class OutboxProcessor {

    private static final DotName CHANNEL = DotName.createSimple("org.eclipse.microprofile.reactive.messaging.Channel");
    private static final DotName OUTBOX_EMITTER = DotName.createSimple(OutboxEmitter.class);
    private static final Pattern TABLE_NAME = Pattern
            .compile("[A-Za-z_][A-Za-z0-9_]{0,58}(\\.[A-Za-z_][A-Za-z0-9_]{0,58})?");
    /** Payloads stored as they are, needing no reflection. */
    private static final Set<String> PLAIN = Set.of("java.lang.String", "java.lang.Object", "io.vertx.core.json.JsonObject",
            "io.vertx.core.json.JsonArray", "io.vertx.core.buffer.Buffer");
    static final String[] SCRIPTS = { "db/idempotency/outbox/flyway/R__quarkus_idempotency_outbox.sql",
            "db/idempotency/outbox/liquibase/outbox-changelog.xml" };

    @BuildStep
    OutboxChannelsBuildItem channels(CombinedIndexBuildItem index) {
        Map<String, Set<String>> channels = new TreeMap<>();
        Set<String> injected = new TreeSet<>();
        for (AnnotationInstance channel : index.getIndex().getAnnotations(CHANNEL)) {
            Type type = injectedType(channel.target());
            if (type == null || !type.name().equals(OUTBOX_EMITTER) || channel.value() == null) {
                continue;
            }
            injected.add(channel.value().asString());
            addPayload(channels, channel.value().asString(), type);
        }
        Set<String> processorOutputs = new TreeSet<>();
        for (AnnotationInstance through : index.getIndex().getAnnotations(IdempotencyDotNames.THROUGH_OUTBOX)) {
            MethodInfo method = through.target().asMethod();
            AnnotationInstance outgoing = method.declaredAnnotation(IdempotencyDotNames.OUTGOING);
            if (outgoing == null || !method.hasDeclaredAnnotation(IdempotencyDotNames.IDEMPOTENT)) {
                continue; // refused with the method's other rules
            }
            processorOutputs.add(outgoing.value().asString());
            addPayload(channels, outgoing.value().asString(), method.returnType());
        }
        return new OutboxChannelsBuildItem(channels, injected, processorOutputs);
    }

    // The payload type of an OutboxEmitter<T> or of a processor's T or Uni<T>: what the relay reads back from JSON.
    private static void addPayload(Map<String, Set<String>> channels, String channel, Type type) {
        Set<String> payloads = channels.computeIfAbsent(channel, c -> new TreeSet<>());
        if (type.kind() == Type.Kind.PARAMETERIZED_TYPE) {
            payloads.add(type.asParameterizedType().arguments().get(0).name().toString());
        } else if (type.kind() == Type.Kind.CLASS) {
            payloads.add(type.name().toString());
        }
    }

    /**
     * The emitter of a channel that only {@code @ThroughOutbox} processors send to, as an injection point would
     * declare it; and, as the processor publishes to the channel too (it forwards nothing), the channel merges the two.
     */
    @BuildStep
    void processorOutputs(OutboxChannelsBuildItem channels, BuildProducer<InjectedEmitterBuildItem> emitters,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        for (String channel : channels.processorOnly()) {
            emitters.produce(InjectedEmitterBuildItem.of(channel, OutboxEmitter.class.getName(), "BUFFER",
                    (int) OutboxEmitterFactory.BUFFER, false, 0));
        }
        for (String channel : channels.processorOutputs()) {
            defaults.produce(new RunTimeConfigurationDefaultBuildItem("mp.messaging.outgoing." + channel + ".merge",
                    "true"));
        }
    }

    private static Type injectedType(AnnotationTarget target) {
        return switch (target.kind()) {
            case FIELD -> target.asField().type();
            case METHOD_PARAMETER -> target.asMethodParameter().method()
                    .parameterType(target.asMethodParameter().position());
            default -> null;
        };
    }

    @BuildStep
    void beans(OutboxChannelsBuildItem channels, SelectedStoreBuildItem store, IdempotencyBuildTimeConfig config,
            Optional<MetricsCapabilityBuildItem> metrics, BuildProducer<AdditionalBeanBuildItem> beans,
            BuildProducer<NativeImageResourceBuildItem> resources, BuildProducer<ReflectiveHierarchyBuildItem> reflective) {
        if (!channels.any()) {
            return;
        }
        if (!store.jdbc()) {
            // thrown here, before ArC would report the emitters' injection points unsatisfied
            String channel = channels.payloadTypes().keySet().iterator().next();
            throw new IdempotencyDefinitionException(Rule.OUTBOX_WITHOUT_JDBC, "channel=" + channel, channel,
                    store.kind() == null ? "memory" : store.kind().toString().toLowerCase(Locale.ROOT));
        }
        beans.produce(AdditionalBeanBuildItem.builder().addBeanClasses(OutboxEmitterFactory.class, OutboxProducer.class,
                OutboxStartup.class, OutboxRelayJob.class).setUnremovable().build());
        if (config.metrics().enabled() && metrics.isPresent()
                && metrics.get().metricsSupported(MetricsFactory.MICROMETER)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(MicrometerOutboxMetrics.class));
        }
        resources.produce(new NativeImageResourceBuildItem(SCRIPTS));
        for (Set<String> types : channels.payloadTypes().values()) {
            for (String type : types) {
                if (!PLAIN.contains(type) && !type.startsWith("java.") && !type.startsWith("[")) {
                    reflective.produce(ReflectiveHierarchyBuildItem
                            .builder(Type.create(DotName.createSimple(type), Type.Kind.CLASS))
                            .source(getClass().getSimpleName()).build());
                }
            }
        }
    }

    /** The outbox's readiness, under the same switches as the store's. */
    @BuildStep
    void health(OutboxChannelsBuildItem channels, SelectedStoreBuildItem store, IdempotencyBuildTimeConfig config,
            BuildProducer<HealthBuildItem> health) {
        if (channels.any() && store.jdbc()) {
            health.produce(new HealthBuildItem(OutboxHealthCheck.class.getName(), config.health().enabled()));
        }
    }

    /**
     * An outbox channel's connector acknowledges a message only once the broker has it: RabbitMQ with publisher
     * confirms, Kafka with {@code acks=all}. Defaults only: the startup check refuses a channel set otherwise.
     */
    @BuildStep
    void channelDefaults(OutboxChannelsBuildItem channels, BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        for (String channel : channels.payloadTypes().keySet()) {
            String prefix = "mp.messaging.outgoing." + channel + ".";
            String connector = ConfigProvider.getConfig().getOptionalValue(prefix + "connector", String.class)
                    .orElse("");
            if (connector.equals(RabbitMQChannelCheck.CONNECTOR)) {
                defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "publish-confirms", "true"));
            } else if (connector.equals(KafkaChannelCheck.CONNECTOR)) {
                defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "acks", "all"));
            }
        }
    }

    // Also without an OutboxEmitter: a Flyway location that names the outbox's script, kept while no code sends yet (or
    // in a test application built of some classes only), must not fail the migration.
    @BuildStep
    void flywayPlaceholders(IdempotencyBuildTimeConfig config, Capabilities capabilities,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        if (!capabilities.isPresent(Capability.FLYWAY)) {
            return;
        }
        String prefix = config.database().datasource().filter(name -> !DataSourceUtil.isDefault(name))
                .map(name -> "quarkus.flyway.\"" + name + "\".placeholders.")
                .orElse("quarkus.flyway.placeholders.");
        String table = config.outbox().table();
        defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "idempotency_outbox_table", table));
    }

    /**
     * An outbox needs a connector to send to, and a table name that is one; a {@code @ThroughOutbox} method is
     * {@code @Idempotent} (its other rules are checked with those of {@code @Idempotent}).
     */
    @BuildStep
    void validate(ValidationPhaseBuildItem validationPhase, OutboxChannelsBuildItem channels,
            IdempotencyBuildTimeConfig config, CombinedIndexBuildItem index,
            BuildProducer<ValidationErrorBuildItem> errors) {
        List<Throwable> found = new ArrayList<>();
        for (AnnotationInstance through : index.getIndex().getAnnotations(IdempotencyDotNames.THROUGH_OUTBOX)) {
            MethodInfo method = through.target().asMethod();
            if (!method.hasDeclaredAnnotation(IdempotencyDotNames.IDEMPOTENT)) {
                found.add(new IdempotencyDefinitionException(Rule.OUTBOX_OUTPUT_NOT_IDEMPOTENT, method));
            }
        }
        for (String channel : channels.payloadTypes().keySet()) {
            Optional<String> connector = ConfigProvider.getConfig()
                    .getOptionalValue("mp.messaging.outgoing." + channel + ".connector", String.class);
            if (connector.isEmpty()) {
                found.add(new IdempotencyDefinitionException(Rule.OUTBOX_UNKNOWN_CHANNEL, "channel=" + channel, channel));
            }
        }
        String table = config.outbox().table();
        if (channels.any() && (!TABLE_NAME.matcher(table).matches() || SqlKeywords.reserved(table))) {
            found.add(new IdempotencyDefinitionException(Rule.INVALID_OUTBOX_TABLE_NAME, "quarkus.idempotency.outbox.table",
                    table));
        }
        if (!found.isEmpty()) {
            errors.produce(new ValidationErrorBuildItem(found));
        }
    }
}
