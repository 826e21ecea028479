package io.quarkiverse.idempotency.deployment;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import jakarta.inject.Singleton;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationTransformation;
import org.jboss.jandex.ClassType;
import org.jboss.jandex.DotName;
import org.jboss.jandex.MethodInfo;

import io.quarkiverse.idempotency.Idempotency;
import io.quarkiverse.idempotency.IdempotencyPurge;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkiverse.idempotency.deployment.exception.InvalidTableNameException;
import io.quarkiverse.idempotency.deployment.exception.SharedScopeException;
import io.quarkiverse.idempotency.deployment.exception.StoreConfigurationException;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig.StoreKind;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyGuard;
import io.quarkiverse.idempotency.runtime.IdempotencyInterceptor;
import io.quarkiverse.idempotency.runtime.IdempotencyRecorder;
import io.quarkiverse.idempotency.runtime.IdempotentMethodIndex;
import io.quarkiverse.idempotency.runtime.IdempotentMethodInfo;
import io.quarkiverse.idempotency.runtime.IdempotentMethods;
import io.quarkiverse.idempotency.runtime.InboundMessages;
import io.quarkiverse.idempotency.runtime.MemoryStoreProducer;
import io.quarkiverse.idempotency.runtime.NoopMetricsProducer;
import io.quarkiverse.idempotency.runtime.WorkerId;
import io.quarkiverse.idempotency.runtime.health.IdempotencyStoreHealthCheck;
import io.quarkiverse.idempotency.runtime.jta.IdempotencyTransactionInterceptor;
import io.quarkiverse.idempotency.runtime.micrometer.MicrometerIdempotencyMetrics;
import io.quarkiverse.idempotency.runtime.rabbitmq.FailureStrategyCheck;
import io.quarkiverse.idempotency.runtime.rabbitmq.IdempotencyFailureHandlerFactory;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQMessageIdReader;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.AnnotationsTransformerBuildItem;
import io.quarkus.arc.deployment.SyntheticBeanBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem.ValidationErrorBuildItem;
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
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelDirection;

class IdempotencyProcessor {

    private static final String FEATURE = "idempotency";
    private static final String RABBITMQ_CONNECTOR = "smallrye-rabbitmq";
    private static final String MICROMETER_REGISTRY_CLASS = "io.micrometer.core.instrument.MeterRegistry";
    private static final String RABBITMQ_CONNECTOR_CLASS = "io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnector";
    private static final Pattern TABLE_NAME = Pattern
            .compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    @BuildStep
    FeatureBuildItem feature() {
        return new FeatureBuildItem(FEATURE);
    }

    @BuildStep
    IdempotentMethodsBuildItem analyse(CombinedIndexBuildItem index) {
        return new IdempotentMethodAnalyzer(index.getIndex()).analyse();
    }

    @BuildStep
    void beans(Capabilities capabilities, IdempotencyBuildTimeConfig config,
            BuildProducer<AdditionalBeanBuildItem> beans) {
        beans.produce(AdditionalBeanBuildItem.builder()
                .addBeanClasses(Idempotent.class, IdempotentMethodIndex.class, IdempotencyInterceptor.class,
                        IdempotencyGuard.class, InboundMessages.class, WorkerId.class, MessageIdKey.class,
                        Idempotency.class, IdempotencyPurge.class, NoopMetricsProducer.class)
                .setUnremovable().build());
        if (capabilities.isPresent(Capability.METRICS) && classPresent(MICROMETER_REGISTRY_CLASS)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(MicrometerIdempotencyMetrics.class));
        }
        if (capabilities.isPresent(Capability.SMALLRYE_HEALTH)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(IdempotencyStoreHealthCheck.class));
        }
        if (capabilities.isPresent(Capability.TRANSACTIONS)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(IdempotencyTransactionInterceptor.class));
        }
        if (rabbitMQPresent()) {
            beans.produce(AdditionalBeanBuildItem.builder()
                    .addBeanClasses(RabbitMQMessageIdReader.class, IdempotencyFailureHandlerFactory.class,
                            FailureStrategyCheck.class)
                    .setUnremovable().build());
        }
        if (storeKind(config, capabilities) == StoreKind.MEMORY || capabilities.isMissing(Capability.HIBERNATE_ORM)) {
            // Without Hibernate ORM the database store is a validation error; the memory store keeps ArC from
            // reporting an unsatisfied store first.
            beans.produce(AdditionalBeanBuildItem.unremovableOf(MemoryStoreProducer.class));
        }
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
    SyntheticBeanBuildItem methodPlans(IdempotentMethodsBuildItem methods, IdempotencyRecorder recorder) {
        List<IdempotentMethodInfo> infos = new ArrayList<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            infos.add(entry.info());
        }
        return SyntheticBeanBuildItem.configure(IdempotentMethods.class)
                .scope(Singleton.class)
                .unremovable()
                .setRuntimeInit()
                .addInjectionPoint(ClassType.create(IdempotencyConfig.class))
                .createWith(recorder.methods(infos))
                .done();
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
            IdempotencyBuildTimeConfig config, Capabilities capabilities,
            BuildProducer<ValidationErrorBuildItem> errors) {
        List<Throwable> found = new ArrayList<>(methods.errors());
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
     * Every RabbitMQ channel consumed by an {@code @Idempotent} method defaults to the idempotency failure strategy,
     * which maps the outcomes to the broker; application.properties still overrides it.
     */
    @BuildStep
    void rabbitMQFailureStrategy(IdempotentMethodsBuildItem methods, List<ChannelBuildItem> channels,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        if (!rabbitMQPresent()) {
            return;
        }
        Set<String> idempotentChannels = new HashSet<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            idempotentChannels.addAll(entry.info().getChannels());
        }
        for (ChannelBuildItem channel : channels) {
            if (channel.getDirection() == ChannelDirection.INCOMING && idempotentChannels.contains(channel.getName())
                    && RABBITMQ_CONNECTOR.equals(channel.getConnector())) {
                defaults.produce(new RunTimeConfigurationDefaultBuildItem(
                        "mp.messaging.incoming." + channel.getName() + ".failure-strategy",
                        IdempotencyFailureHandlerFactory.NAME));
            }
        }
    }

    static StoreKind storeKind(IdempotencyBuildTimeConfig config, Capabilities capabilities) {
        return config.store().orElse(capabilities.isPresent(Capability.HIBERNATE_ORM) ? StoreKind.DATABASE
                : StoreKind.MEMORY);
    }

    private static boolean rabbitMQPresent() {
        return classPresent(RABBITMQ_CONNECTOR_CLASS);
    }

    private static boolean classPresent(String name) {
        try {
            Class.forName(name, false, Thread.currentThread().getContextClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

}
