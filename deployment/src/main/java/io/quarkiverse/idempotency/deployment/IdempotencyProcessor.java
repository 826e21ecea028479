package io.quarkiverse.idempotency.deployment;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.ConfigProvider;
import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTransformation;
import org.jboss.jandex.ClassType;
import org.jboss.jandex.DotName;
import org.jboss.jandex.MethodInfo;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.runtime.DeadLetterReplayer;
import io.quarkiverse.idempotency.runtime.Deliveries;
import io.quarkiverse.idempotency.runtime.EarlierIncarnations;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig.StoreKind;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyInterceptor;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.IdempotencyRecorder;
import io.quarkiverse.idempotency.runtime.IdempotentMethodIndex;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkiverse.idempotency.runtime.InboundMessages;
import io.quarkiverse.idempotency.runtime.MemoryStoreProducer;
import io.quarkiverse.idempotency.runtime.NonBlockingStore;
import io.quarkiverse.idempotency.runtime.NoopMetricsProducer;
import io.quarkiverse.idempotency.runtime.ProgrammaticIdempotency;
import io.quarkiverse.idempotency.runtime.ReactiveDeliveryInterceptor;
import io.quarkiverse.idempotency.runtime.Redelivery;
import io.quarkiverse.idempotency.runtime.StoreCheck;
import io.quarkiverse.idempotency.runtime.StoreDeadLetters;
import io.quarkiverse.idempotency.runtime.StorePurge;
import io.quarkiverse.idempotency.runtime.TransactionalDeliveryInterceptor;
import io.quarkiverse.idempotency.runtime.WorkerId;
import io.quarkiverse.idempotency.runtime.health.IdempotencyStoreHealthCheck;
import io.quarkiverse.idempotency.runtime.micrometer.MicrometerIdempotencyMetrics;
import io.quarkiverse.idempotency.runtime.opentelemetry.OpenTelemetryDeliveryTracing;
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
import io.quarkus.deployment.builditem.nativeimage.ReflectiveClassBuildItem;
import io.quarkus.deployment.metrics.MetricsCapabilityBuildItem;
import io.quarkus.runtime.metrics.MetricsFactory;
import io.quarkus.smallrye.health.deployment.spi.HealthBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelDirection;

/**
 * The core of the extension: finds and checks the {@code @Idempotent} methods, registers the beans every application
 * has, and records each method's plan. Each connector's steps are in a processor of its own ({@link RabbitMQProcessor},
 * {@link KafkaProcessor}, {@link InMemoryConnectorProcessor}), the database store's in {@link DatabaseStoreProcessor}.
 */
class IdempotencyProcessor {

    private static final String FEATURE = "idempotency";

    @BuildStep
    FeatureBuildItem feature() {
        return new FeatureBuildItem(FEATURE);
    }

    @BuildStep
    SelectedStoreBuildItem selectStore(IdempotencyBuildTimeConfig config, Capabilities capabilities) {
        boolean orm = capabilities.isPresent(Capability.HIBERNATE_ORM);
        boolean agroal = capabilities.isPresent(Capability.AGROAL);
        boolean ormPanache = orm && QuarkusClassLoader.isClassPresentAtRuntime(ORM_PANACHE);
        // Hibernate Reactive brings Hibernate ORM without a JDBC datasource (or with one for migrations only, without
        // Hibernate ORM Panache): the store then talks the reactive client
        boolean reactiveClientOnly = capabilities.isPresent(Capability.REACTIVE_PG_CLIENT)
                && (!agroal || (orm && !ormPanache));
        // plain JDBC on PostgreSQL (JDBC code, jOOQ, MyBatis) is enough: the store speaks JDBC, without Hibernate ORM
        boolean postgresJdbc = agroal && QuarkusClassLoader.isClassPresentAtRuntime(POSTGRESQL_DRIVER);
        boolean database = orm || postgresJdbc;
        return new SelectedStoreBuildItem(config.store().orElse(database ? StoreKind.DATABASE : StoreKind.MEMORY),
                database, reactiveClientOnly, ormPanache && !reactiveClientOnly);
    }

    @BuildStep
    IdempotentMethodsBuildItem analyse(CombinedIndexBuildItem index, SelectedStoreBuildItem store,
            Capabilities capabilities) {
        boolean keysWithoutBlocking = store.memory()
                || (store.database() && capabilities.isPresent(Capability.REACTIVE_PG_CLIENT));
        return new IdempotentMethodAnalyzer(index.getIndex(), store.memory(), keysWithoutBlocking).analyse();
    }

    /** PostgreSQL's JDBC driver: present with quarkus-jdbc-postgresql. */
    private static final String POSTGRESQL_DRIVER = "org.postgresql.Driver";

    /** The JDBC store's entity's base class: present with Hibernate ORM Panache. */
    private static final String ORM_PANACHE = "io.quarkus.hibernate.orm.panache.PanacheEntityBase";

    /** Where {@code @WithTransaction} keeps its sessions: present with Hibernate Reactive Panache. */
    private static final String REACTIVE_SESSIONS = "io.quarkus.hibernate.reactive.panache.common.runtime.SessionOperations";

    @BuildStep
    void beans(Capabilities capabilities, IdempotencyBuildTimeConfig config, SelectedStoreBuildItem store,
            Optional<MetricsCapabilityBuildItem> metrics, BuildProducer<AdditionalBeanBuildItem> beans) {
        beans.produce(AdditionalBeanBuildItem.builder()
                .addBeanClasses(Idempotent.class, IdempotentMethodIndex.class, IdempotencyInterceptor.class,
                        Deliveries.class, InboundMessages.class, WorkerId.class, MessageIdKey.class,
                        ProgrammaticIdempotency.class, StorePurge.class, StoreCheck.class, NoopMetricsProducer.class,
                        StoreDeadLetters.class, DeadLetterReplayer.class, NonBlockingStore.class,
                        EarlierIncarnations.class)
                .setUnremovable().build());
        if (config.metrics().enabled() && metrics.isPresent()
                && metrics.get().metricsSupported(MetricsFactory.MICROMETER)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(MicrometerIdempotencyMetrics.class));
        }
        if (config.tracing().enabled() && capabilities.isPresent(Capability.OPENTELEMETRY_TRACER)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(OpenTelemetryDeliveryTracing.class));
        }
        if (capabilities.isPresent(Capability.TRANSACTIONS)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(TransactionalDeliveryInterceptor.class));
        }
        if (QuarkusClassLoader.isClassPresentAtRuntime(REACTIVE_SESSIONS)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(ReactiveDeliveryInterceptor.class));
        }
        if (!store.database()) {
            // Without a datasource the database store is a validation error; the memory store keeps ArC from
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

    /**
     * The implementation of the log messages' interface, generated at compile time and found by its name, like
     * SmallRye's: constructed by the classes that log, at whatever moment the native image initializes them.
     */
    @BuildStep
    ReflectiveClassBuildItem messageLogger() {
        return ReflectiveClassBuildItem.builder(IdempotencyLogger.class.getName() + "_$logger").constructors()
                .reason(getClass().getName()).build();
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
            List<IdempotentConnectorBuildItem> connectors, IdempotencyRecorder recorder) {
        List<IdempotentMethodInfo> infos = new ArrayList<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            infos.add(entry.info());
        }
        Map<String, String> channelConnectors = channelConnectors(methods, channels);
        Map<String, Redelivery> redeliveries = new HashMap<>();
        channelConnectors.forEach((channel, connector) -> find(connectors, connector)
                .ifPresent(c -> redeliveries.put(channel, c.redelivery())));
        return SyntheticBeanBuildItem.configure(IdempotentMethods.class)
                .scope(Singleton.class)
                .unremovable()
                .setRuntimeInit()
                .addInjectionPoint(ClassType.create(IdempotencyConfig.class))
                .addInjectionPoint(ClassType.create(IdempotencyStore.class))
                .addInjectionPoint(ClassType.create(NonBlockingStore.class))
                .createWith(recorder.methods(infos, channelConnectors, redeliveries))
                .done();
    }

    /** @return the connector of every channel consumed by an {@code @Idempotent} method, as configured or detected */
    private static Map<String, String> channelConnectors(IdempotentMethodsBuildItem methods,
            List<ChannelBuildItem> channels) {
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

    private static Optional<IdempotentConnectorBuildItem> find(List<IdempotentConnectorBuildItem> connectors,
            String name) {
        return connectors.stream().filter(c -> c.name().equals(name)).findFirst();
    }

    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    void filterOutcomeLogs(IdempotencyRecorder recorder) {
        recorder.filterOutcomeLogs();
    }

    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    void memoryStoreInProduction(SelectedStoreBuildItem store, IdempotencyBuildTimeConfig config,
            LaunchModeBuildItem launchMode, IdempotencyRecorder recorder) {
        if (store.memory()) {
            recorder.memoryStoreInProduction(launchMode.getLaunchMode(), config.store().isPresent());
        }
    }

    @BuildStep
    void validate(ValidationPhaseBuildItem validationPhase, IdempotentMethodsBuildItem methods,
            List<ChannelBuildItem> channels, List<IdempotentConnectorBuildItem> connectors,
            BuildProducer<ValidationErrorBuildItem> errors) {
        List<Throwable> found = new ArrayList<>(methods.errors());
        found.addAll(unsupportedConnectors(methods, channels, connectors));
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
            List<ChannelBuildItem> channels, List<IdempotentConnectorBuildItem> connectors) {
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
                    errors.add(new IdempotencyDefinitionException(Rule.INTERNAL_CHANNEL, "channel=" + name,
                            entry.info().getDescription(), name));
                } else if (connector != null && find(connectors, connector).isEmpty()) {
                    List<String> supported = new ArrayList<>();
                    connectors.forEach(c -> supported.add(c.name()));
                    errors.add(new IdempotencyDefinitionException(Rule.UNSUPPORTED_CONNECTOR, "channel=" + name,
                            entry.info().getDescription(), name, connector, String.join(" or ", supported)));
                }
            }
        }
        return errors;
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
                    errors.add(new IdempotencyDefinitionException(Rule.SHARED_SCOPE, "channel=" + channel, other,
                            info.getDescription(), channel, scope));
                }
            }
        }
        return errors;
    }
}
