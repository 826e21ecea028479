package io.quarkiverse.idempotency.deployment;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTransformation;
import org.jboss.jandex.ClassType;
import org.jboss.jandex.DotName;
import org.jboss.jandex.MethodInfo;
import org.jboss.jandex.Type;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkiverse.idempotency.deployment.exception.InvalidTableNameException;
import io.quarkiverse.idempotency.deployment.exception.SharedScopeException;
import io.quarkiverse.idempotency.deployment.exception.StoreConfigurationException;
import io.quarkiverse.idempotency.deployment.exception.UnsupportedConnectorException;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig.StoreKind;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyInterceptor;
import io.quarkiverse.idempotency.runtime.IdempotencyRecorder;
import io.quarkiverse.idempotency.runtime.IdempotentMethodIndex;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkiverse.idempotency.runtime.InboundMessages;
import io.quarkiverse.idempotency.runtime.MemoryStoreProducer;
import io.quarkiverse.idempotency.runtime.NoopMetricsProducer;
import io.quarkiverse.idempotency.runtime.ProgrammaticIdempotency;
import io.quarkiverse.idempotency.runtime.StoreCheck;
import io.quarkiverse.idempotency.runtime.StorePurge;
import io.quarkiverse.idempotency.runtime.TransactionalDeliveryInterceptor;
import io.quarkiverse.idempotency.runtime.WorkerId;
import io.quarkiverse.idempotency.runtime.health.IdempotencyStoreHealthCheck;
import io.quarkiverse.idempotency.runtime.kafka.KafkaChannelCheck;
import io.quarkiverse.idempotency.runtime.kafka.KafkaIdempotencyFailureHandlerFactory;
import io.quarkiverse.idempotency.runtime.kafka.KafkaMessageIdReader;
import io.quarkiverse.idempotency.runtime.kafka.UnreadableRecords;
import io.quarkiverse.idempotency.runtime.micrometer.MicrometerIdempotencyMetrics;
import io.quarkiverse.idempotency.runtime.rabbitmq.IdempotencyFailureHandlerFactory;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQChannelCheck;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQMessageIdReader;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.AnnotationsTransformerBuildItem;
import io.quarkus.arc.deployment.SyntheticBeanBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem.ValidationErrorBuildItem;
import io.quarkus.bootstrap.classloading.QuarkusClassLoader;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;
import io.quarkus.deployment.builditem.FeatureBuildItem;
import io.quarkus.deployment.builditem.LaunchModeBuildItem;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.deployment.builditem.nativeimage.ReflectiveClassBuildItem;
import io.quarkus.deployment.metrics.MetricsCapabilityBuildItem;
import io.quarkus.runtime.metrics.MetricsFactory;
import io.quarkus.smallrye.health.deployment.spi.HealthBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelDirection;

class IdempotencyProcessor {

    private static final String FEATURE = "idempotency";
    private static final String RABBITMQ_CONNECTOR = "smallrye-rabbitmq";
    private static final String KAFKA_CONNECTOR = IdempotentMethods.KAFKA_CONNECTOR;
    /** The connectors whose failure handling maps the extension's outcomes. */
    static final List<String> SUPPORTED_CONNECTORS = List.of(RABBITMQ_CONNECTOR, KAFKA_CONNECTOR,
            "smallrye-in-memory");
    /** What a batch consumer of Kafka takes: records with no outcome each. */
    private static final Set<String> KAFKA_BATCH_TYPES = Set.of("java.util.List", "java.util.Collection",
            "io.smallrye.reactive.messaging.kafka.KafkaRecordBatch",
            "org.apache.kafka.clients.consumer.ConsumerRecords");
    private static final Set<String> POSTGRESQL_KINDS = Set.of("postgresql", "pgsql", "pg", "postgres");
    private static final String RABBITMQ_CONNECTOR_CLASS = "io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnector";
    private static final String KAFKA_CONNECTOR_CLASS = "io.smallrye.reactive.messaging.kafka.KafkaConnector";
    private static final Pattern TABLE_NAME = Pattern
            .compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    @BuildStep
    FeatureBuildItem feature() {
        return new FeatureBuildItem(FEATURE);
    }

    @BuildStep
    IdempotentMethodsBuildItem analyse(CombinedIndexBuildItem index, IdempotencyBuildTimeConfig config,
            Capabilities capabilities) {
        return new IdempotentMethodAnalyzer(index.getIndex(), storeKind(config, capabilities) == StoreKind.MEMORY)
                .analyse();
    }

    @BuildStep
    void beans(Capabilities capabilities, IdempotencyBuildTimeConfig config,
            Optional<MetricsCapabilityBuildItem> metrics, BuildProducer<AdditionalBeanBuildItem> beans) {
        beans.produce(AdditionalBeanBuildItem.builder()
                .addBeanClasses(Idempotent.class, IdempotentMethodIndex.class, IdempotencyInterceptor.class,
                        Deliveries.class, InboundMessages.class, WorkerId.class, MessageIdKey.class,
                        ProgrammaticIdempotency.class, StorePurge.class, StoreCheck.class, NoopMetricsProducer.class)
                .setUnremovable().build());
        if (config.metrics().enabled() && metrics.isPresent()
                && metrics.get().metricsSupported(MetricsFactory.MICROMETER)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(MicrometerIdempotencyMetrics.class));
        }
        if (capabilities.isPresent(Capability.TRANSACTIONS)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(TransactionalDeliveryInterceptor.class));
        }
        if (rabbitMQPresent()) {
            beans.produce(AdditionalBeanBuildItem.builder()
                    .addBeanClasses(RabbitMQMessageIdReader.class, IdempotencyFailureHandlerFactory.class,
                            RabbitMQChannelCheck.class)
                    .setUnremovable().build());
        }
        if (kafkaPresent()) {
            beans.produce(AdditionalBeanBuildItem.builder()
                    .addBeanClasses(KafkaMessageIdReader.class, KafkaIdempotencyFailureHandlerFactory.class,
                            KafkaChannelCheck.class, UnreadableRecords.class)
                    .setUnremovable().build());
        }
        if (storeKind(config, capabilities) == StoreKind.MEMORY || capabilities.isMissing(Capability.HIBERNATE_ORM)) {
            // Without Hibernate ORM the database store is a validation error; the memory store keeps ArC from
            // reporting an unsatisfied store first.
            beans.produce(AdditionalBeanBuildItem.unremovableOf(MemoryStoreProducer.class));
        }
    }

    /**
     * The store's readiness check, under SmallRye Health's switches ({@code quarkus.smallrye-health.extensions.enabled})
     * and this extension's own ({@code quarkus.idempotency.health.enabled}).
     */
    @BuildStep
    HealthBuildItem health(IdempotencyBuildTimeConfig config) {
        return new HealthBuildItem(IdempotencyStoreHealthCheck.class.getName(), config.health().enabled());
    }

    @BuildStep
    void keyFunctions(IdempotentMethodsBuildItem methods, BuildProducer<AdditionalBeanBuildItem> beans,
            BuildProducer<ReflectiveClassBuildItem> reflective) {
        Set<String> keyFunctions = new HashSet<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            keyFunctions.add(entry.info().getKeyFunctionClass());
        }
        if (keyFunctions.isEmpty()) {
            return;
        }
        // A key function class that is not a bean becomes a @Singleton one; its class is loaded by name at startup.
        beans.produce(AdditionalBeanBuildItem.builder().addBeanClasses(keyFunctions)
                .setDefaultScope(DotName.createSimple(Singleton.class)).setUnremovable().build());
        reflective.produce(ReflectiveClassBuildItem.builder(keyFunctions.toArray(String[]::new))
                .reason(getClass().getName()).build());
    }

    /**
     * Gives each valid method its index, so that the interceptor finds its plan without reflection; takes
     * {@code @Idempotent} off invalid ones, so that the build reports this extension's error rather than ArC's.
     */
    @BuildStep
    void indexMethods(IdempotentMethodsBuildItem methods, BuildProducer<AnnotationsTransformerBuildItem> transformers) {
        List<MethodInfo> ordered = new ArrayList<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            ordered.add(entry.method());
        }
        transformers.produce(new AnnotationsTransformerBuildItem(AnnotationTransformation.forMethods()
                .whenMethod(ordered::contains)
                .transform(t -> t.add(AnnotationInstance.builder(IdempotentMethodIndex.class)
                        .add("value", ordered.indexOf(t.declaration().asMethod())).build()))));
        List<MethodInfo> invalid = methods.invalidMethods();
        if (!invalid.isEmpty()) {
            transformers.produce(new AnnotationsTransformerBuildItem(AnnotationTransformation.forMethods()
                    .whenMethod(invalid::contains)
                    .transform(t -> t.remove(a -> a.name().equals(IdempotencyDotNames.IDEMPOTENT)))));
        }
    }

    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    SyntheticBeanBuildItem methodPlans(IdempotentMethodsBuildItem methods, List<ChannelBuildItem> channels,
            IdempotencyRecorder recorder) {
        List<IdempotentMethodInfo> infos = new ArrayList<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            infos.add(entry.info());
        }
        return SyntheticBeanBuildItem.configure(IdempotentMethods.class)
                .scope(Singleton.class)
                .unremovable()
                .setRuntimeInit()
                .addInjectionPoint(ClassType.create(IdempotencyConfig.class))
                .addInjectionPoint(ClassType.create(IdempotencyStore.class))
                .createWith(recorder.methods(infos, connectors(methods, channels)))
                .done();
    }

    /** @return the connector of every channel consumed by an {@code @Idempotent} method, as configured or detected */
    private static Map<String, String> connectors(IdempotentMethodsBuildItem methods, List<ChannelBuildItem> channels) {
        Set<String> idempotent = new HashSet<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            idempotent.addAll(entry.info().getChannels());
        }
        Map<String, String> connectors = new HashMap<>();
        for (ChannelBuildItem channel : channels) {
            if (channel.getDirection() == ChannelDirection.INCOMING && idempotent.contains(channel.getName())
                    && channel.getConnector() != null) {
                connectors.put(channel.getName(), channel.getConnector());
            }
        }
        return connectors;
    }

    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    void filterOutcomeLogs(IdempotencyRecorder recorder) {
        recorder.filterOutcomeLogs();
    }

    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    void warnAboutMemoryStore(IdempotencyBuildTimeConfig config, Capabilities capabilities,
            LaunchModeBuildItem launchMode, IdempotencyRecorder recorder) {
        if (storeKind(config, capabilities) == StoreKind.MEMORY) {
            recorder.warnAboutMemoryStore(launchMode.getLaunchMode());
        }
    }

    @BuildStep
    void validate(ValidationPhaseBuildItem validationPhase, IdempotentMethodsBuildItem methods,
            IdempotencyBuildTimeConfig config, Capabilities capabilities, List<ChannelBuildItem> channels,
            BuildProducer<ValidationErrorBuildItem> errors) {
        List<Throwable> found = new ArrayList<>(methods.errors());
        found.addAll(unsupportedConnectors(methods, channels));
        if (DatabaseStoreProcessor.databaseStore(config, capabilities)) {
            String datasource = config.database().datasource()
                    .filter(n -> !io.quarkus.datasource.common.runtime.DataSourceUtil.isDefault(n))
                    .map(n -> "quarkus.datasource.\"" + n + "\".db-kind").orElse("quarkus.datasource.db-kind");
            ConfigProvider.getConfig().getOptionalValue(datasource, String.class)
                    .filter(kind -> !POSTGRESQL_KINDS.contains(kind.toLowerCase(java.util.Locale.ROOT)))
                    .ifPresent(kind -> found.add(new StoreConfigurationException("The idempotency database store runs"
                            + " PostgreSQL's SQL, but its datasource is " + datasource + "=" + kind,
                            datasource, "use a PostgreSQL datasource, set"
                                    + " quarkus.idempotency.store=memory for tests, or supply an IdempotencyStore bean")));
        }
        if (config.store().orElse(null) == StoreKind.DATABASE && capabilities.isMissing(Capability.HIBERNATE_ORM)) {
            found.add(new StoreConfigurationException("quarkus.idempotency.store=database requires Quarkus Hibernate"
                    + " ORM", "quarkus.idempotency.store",
                    "add quarkus-hibernate-orm-panache and a JDBC driver to the"
                            + " project dependencies, or set quarkus.idempotency.store=memory"));
        }
        String table = config.database().table();
        if (!TABLE_NAME.matcher(table).matches() || SqlKeywords.reserved(table)) {
            found.add(new InvalidTableNameException("quarkus.idempotency.database.table='" + table + "' is not a"
                    + " valid table name", "quarkus.idempotency.database.table",
                    "use letters, digits and"
                            + " underscores, starting with a letter or underscore, optionally qualified by a schema"
                            + " (messaging.idempotency_record), and not a reserved SQL word"));
        }
        found.addAll(sharedScopes(methods));
        if (!found.isEmpty()) {
            errors.produce(new ValidationErrorBuildItem(found));
        }
    }

    /**
     * A channel whose connector's failure handling the extension cannot drive would turn its outcomes into something
     * else: a busy message acked or dead-lettered, a retry that never waits, an offset committed past a failure.
     */
    private static List<Throwable> unsupportedConnectors(IdempotentMethodsBuildItem methods,
            List<ChannelBuildItem> channels) {
        List<Throwable> errors = new ArrayList<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            for (String name : entry.info().getChannels()) {
                String connector = null;
                for (ChannelBuildItem channel : channels) {
                    if (channel.getDirection() == ChannelDirection.INCOMING && channel.getName().equals(name)) {
                        connector = channel.getConnector();
                    }
                }
                boolean disabled = !ConfigProvider.getConfig()
                        .getOptionalValue("mp.messaging.incoming." + name + ".enabled", Boolean.class).orElse(true);
                if (connector == null && !disabled) {
                    errors.add(new UnsupportedConnectorException("@Idempotent method " + entry.info().getDescription()
                            + " consumes channel '" + name + "', which no connector feeds (an internal channel): its"
                            + " outcomes would go back to whatever emitted the message, which cannot wait and retry",
                            "channel=" + name, "put @Idempotent on the method that consumes from the broker"));
                } else if (KAFKA_CONNECTOR.equals(connector)) {
                    kafka(entry, name).ifPresent(errors::add);
                } else if (connector != null && !SUPPORTED_CONNECTORS.contains(connector)) {
                    errors.add(new UnsupportedConnectorException("@Idempotent method " + entry.info().getDescription()
                            + " consumes channel '" + name + "' of connector " + connector + ", whose failure handling"
                            + " the extension cannot map its outcomes to (a busy message would be acked, dead-lettered"
                            + " or committed past instead of retried later)", "channel=" + name,
                            "use a channel of " + String.join(" or ", SUPPORTED_CONNECTORS)
                                    + ", or the programmatic form (Idempotency) where you decide what a nack does"));
                }
            }
        }
        return errors;
    }

    /**
     * Kafka cannot requeue one record: a delivery to retry is retried in place by the interceptor, which needs the
     * method's invocation to end with the record's outcome. A batch has no outcome per record; a Message method or a
     * processor settles its message after the invocation, through acknowledgements the interceptor cannot retry.
     */
    private static Optional<Throwable> kafka(IdempotentMethodsBuildItem.Entry entry, String channel) {
        IdempotentMethodInfo info = entry.info();
        Type parameter = entry.method().parametersCount() == 0 ? null : entry.method().parameterType(0);
        boolean batch = parameter != null && (parameter.kind() == Type.Kind.ARRAY
                || KAFKA_BATCH_TYPES.contains(parameter.name().toString()));
        String what = batch
                ? "consumes a batch of records, which has no outcome per record (one busy or poison record would"
                        + " hold or dead-letter the others)"
                : info.isMessageParameter() ? "takes the Message, which it acknowledges itself"
                        : info.isProcessor() ? "produces a message (@Outgoing), whose acknowledgement comes after the"
                                + " method returned" : null;
        if (what == null) {
            return Optional.empty();
        }
        return Optional.of(new UnsupportedConnectorException("@Idempotent method " + info.getDescription()
                + " consumes Kafka channel '" + channel + "' and " + what + ": Kafka cannot requeue one record, so"
                + " the extension retries a busy, failed or unstored record in place, inside the method's invocation",
                "channel=" + channel, "take one record's payload and return void, Uni<Void> or CompletionStage<Void>;"
                        + " send any output with an Emitter"));
    }

    // Two methods consuming one channel (a broadcast) under one scope would share keys: the second never runs.
    private static List<Throwable> sharedScopes(IdempotentMethodsBuildItem methods) {
        Map<String, String> owners = new HashMap<>();
        List<Throwable> errors = new ArrayList<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            IdempotentMethodInfo info = entry.info();
            for (String channel : info.getChannels()) {
                String scope = info.getScope().isEmpty() ? channel : info.getScope();
                String other = owners.putIfAbsent(channel + "\u0000" + scope, info.getDescription());
                if (other != null) {
                    errors.add(new SharedScopeException("@Idempotent methods " + other + " and "
                            + info.getDescription() + " both consume channel '" + channel + "' under scope '" + scope
                            + "', so the second would take every message for a duplicate",
                            "channel=" + channel, "give each of them its own @Idempotent(scope = ...)"));
                }
            }
        }
        return errors;
    }

    /**
     * Every RabbitMQ or Kafka channel consumed by an {@code @Idempotent} method defaults to the idempotency failure
     * strategy, which maps the outcomes to the broker; application.properties still overrides it (and the startup
     * checks then say why that loses messages).
     */
    @BuildStep
    void failureStrategy(IdempotentMethodsBuildItem methods, List<ChannelBuildItem> channels,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        Set<String> connectors = new HashSet<>();
        if (rabbitMQPresent()) {
            connectors.add(RABBITMQ_CONNECTOR);
        }
        if (kafkaPresent()) {
            connectors.add(KAFKA_CONNECTOR);
        }
        Set<String> idempotentChannels = new HashSet<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            idempotentChannels.addAll(entry.info().getChannels());
        }
        for (ChannelBuildItem channel : channels) {
            if (channel.getDirection() == ChannelDirection.INCOMING && idempotentChannels.contains(channel.getName())
                    && connectors.contains(channel.getConnector())) {
                defaults.produce(new RunTimeConfigurationDefaultBuildItem(
                        "mp.messaging.incoming." + channel.getName() + ".failure-strategy",
                        IdempotencyFailureHandlerFactory.NAME));
                if (KAFKA_CONNECTOR.equals(channel.getConnector())) {
                    // A record its deserializer cannot read reaches UnreadableRecords, which dead-letters it, instead
                    // of stopping the channel.
                    defaults.produce(new RunTimeConfigurationDefaultBuildItem(
                            "mp.messaging.incoming." + channel.getName() + ".fail-on-deserialization-failure", "false"));
                }
            }
        }
    }

    static StoreKind storeKind(IdempotencyBuildTimeConfig config, Capabilities capabilities) {
        return config.store().orElse(capabilities.isPresent(Capability.HIBERNATE_ORM) ? StoreKind.DATABASE
                : StoreKind.MEMORY);
    }

    private static boolean rabbitMQPresent() {
        return QuarkusClassLoader.isClassPresentAtRuntime(RABBITMQ_CONNECTOR_CLASS);
    }

    private static boolean kafkaPresent() {
        return QuarkusClassLoader.isClassPresentAtRuntime(KAFKA_CONNECTOR_CLASS);
    }

}
