package io.quarkiverse.idempotency.deployment;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig.StoreKind;
import io.quarkiverse.idempotency.runtime.PartitionEnds;
import io.quarkiverse.idempotency.runtime.PurgeJob;
import io.quarkiverse.idempotency.runtime.database.AsynchronousClaimCommitCheck;
import io.quarkiverse.idempotency.runtime.database.DatabaseSchema;
import io.quarkiverse.idempotency.runtime.database.DatabaseStoreProducer;
import io.quarkiverse.idempotency.runtime.database.IdempotencyRecord;
import io.quarkiverse.idempotency.runtime.database.PoolKeysProvider;
import io.quarkiverse.idempotency.runtime.database.PoolSchema;
import io.quarkiverse.idempotency.runtime.database.PoolStoreProducer;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem.ValidationErrorBuildItem;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.builditem.AdditionalIndexedClassesBuildItem;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.deployment.builditem.nativeimage.NativeImageResourceBuildItem;

/**
 * The database store: its entity, its beans, its startup check, the purge job, and the checks of its settings. Every
 * step but the checks runs only when the database store is selected; none refers to Hibernate ORM's own build items,
 * so this class loads in applications without it.
 */
class DatabaseStoreProcessor {

    private static final Set<String> POSTGRESQL_KINDS = Set.of("postgresql", "pgsql", "pg", "postgres");
    private static final Pattern TABLE_NAME = Pattern
            .compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    static final String[] MIGRATIONS = { "db/idempotency/postgresql/V1000__create_idempotency_record.sql",
            "db/idempotency/postgresql/V1001__index_live_claims.sql",
            "db/idempotency/postgresql/V1002__leases_and_attempts.sql",
            "db/idempotency/flyway/R__quarkus_idempotency.sql",
            "db/idempotency/liquibase/idempotency-changelog.xml" };

    /**
     * Indexing the entity is what lets Panache enhance a class that lives in the extension's jar (and Hibernate ORM
     * then finds it in the default persistence unit).
     */
    @BuildStep
    void entity(SelectedStoreBuildItem store, BuildProducer<AdditionalIndexedClassesBuildItem> indexed,
            BuildProducer<AdditionalBeanBuildItem> beans, BuildProducer<NativeImageResourceBuildItem> resources) {
        if (store.reactiveClientOnly()) {
            beans.produce(AdditionalBeanBuildItem.builder().addBeanClasses(PoolStoreProducer.class, PoolSchema.class)
                    .setUnremovable().build());
            return;
        }
        if (!store.database()) {
            return;
        }
        if (store.entity()) {
            indexed.produce(new AdditionalIndexedClassesBuildItem(IdempotencyRecord.class.getName()));
        }
        beans.produce(AdditionalBeanBuildItem.builder().addBeanClasses(DatabaseStoreProducer.class, DatabaseSchema.class,
                AsynchronousClaimCommitCheck.class)
                .setUnremovable().build());
        resources.produce(new NativeImageResourceBuildItem(MIGRATIONS));
    }

    /** Methods on the event loop make their lease-mode calls through the reactive PostgreSQL client, when present. */
    @BuildStep
    void reactiveKeys(SelectedStoreBuildItem store, Capabilities capabilities,
            BuildProducer<AdditionalBeanBuildItem> beans) {
        if (store.database() && capabilities.isPresent(Capability.REACTIVE_PG_CLIENT)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(PoolKeysProvider.class));
        }
    }

    /**
     * The placeholders of the shipped repeatable Flyway migration default to the configured table and partitioning, so
     * that an application adding its location needs nothing else, whatever its table is called.
     */
    @BuildStep
    void flywayPlaceholders(IdempotencyBuildTimeConfig config, Capabilities capabilities, SelectedStoreBuildItem store,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        if (!store.jdbc() || !capabilities.isPresent(Capability.FLYWAY)) {
            return;
        }
        String prefix = config.database().datasource().filter(name -> !DataSourceUtil.isDefault(name))
                .map(name -> "quarkus.flyway.\"" + name + "\".placeholders.")
                .orElse("quarkus.flyway.placeholders.");
        String table = config.database().table();
        defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "idempotency_table", table));
        defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "idempotency_table_name",
                table.substring(table.indexOf('.') + 1)));
        // a new table's layout, as the extension would create it
        defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "idempotency_partitioning",
                "${quarkus.idempotency.database.partitioning:none}"));
    }

    /** The purge job exists only with the database store and purging enabled. */
    @BuildStep(onlyIf = PurgeEnabled.class)
    void purgeJob(SelectedStoreBuildItem store, BuildProducer<AdditionalBeanBuildItem> beans) {
        if (store.database()) {
            beans.produce(AdditionalBeanBuildItem.builder().addBeanClasses(PurgeJob.class, PartitionEnds.class)
                    .setUnremovable().build());
        }
    }

    /**
     * The database store's settings: a datasource that is not PostgreSQL, the store selected without a datasource, a
     * table name that is not one.
     */
    @BuildStep
    void validate(ValidationPhaseBuildItem validationPhase, IdempotencyBuildTimeConfig config,
            SelectedStoreBuildItem store, IdempotentMethodsBuildItem methods,
            BuildProducer<ValidationErrorBuildItem> errors) {
        List<Throwable> found = new ArrayList<>();
        if (store.database()) {
            String kindProperty = config.database().datasource().filter(n -> !DataSourceUtil.isDefault(n))
                    .map(n -> "quarkus.datasource.\"" + n + "\".db-kind").orElse("quarkus.datasource.db-kind");
            ConfigProvider.getConfig().getOptionalValue(kindProperty, String.class)
                    .filter(kind -> !POSTGRESQL_KINDS.contains(kind.toLowerCase(Locale.ROOT)))
                    .ifPresent(kind -> found.add(new IdempotencyDefinitionException(Rule.NOT_POSTGRESQL, kindProperty,
                            kindProperty, kind)));
        }
        // keys on a named datasource never share a transaction with other work: the only datasource, or apart
        if (store.jdbc() && config.database().datasource().filter(n -> !DataSourceUtil.isDefault(n)).isEmpty()) {
            multipleLastResources(methods).ifPresent(found::add);
        }
        if (store.reactiveClientOnly()) {
            for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
                if (entry.info().isTransactional() && !entry.info().isReactiveTransactional()) {
                    found.add(new IdempotencyDefinitionException(Rule.TRANSACTIONAL_WITHOUT_JDBC, entry.method(),
                            entry.info().getDescription()));
                }
            }
        }
        if (store.database()) {
            found.addAll(reactiveOnAnotherDataSource(config, methods));
        }
        if (store.kind() == StoreKind.DATABASE && !store.database()) {
            found.add(new IdempotencyDefinitionException(Rule.DATABASE_WITHOUT_DATASOURCE, "quarkus.idempotency.store"));
        }
        String table = config.database().table();
        if (!TABLE_NAME.matcher(table).matches() || SqlKeywords.reserved(table)) {
            found.add(new IdempotencyDefinitionException(Rule.INVALID_TABLE_NAME, "quarkus.idempotency.database.table",
                    table));
        }
        if (!found.isEmpty()) {
            errors.produce(new ValidationErrorBuildItem(found));
        }
    }

    /**
     * A transaction that may commit two non-XA datasources one after the other can commit the key (on the default
     * datasource, where keys join handlers' transactions) without the work it stands for. Quarkus refuses that by default; the
     * extension relies on the refusal to find handlers whose work is
     * on another datasource than the keys.
     */
    private static Optional<IdempotencyDefinitionException> multipleLastResources(IdempotentMethodsBuildItem methods) {
        String property = "quarkus.transaction-manager.unsafe-multiple-last-resources";
        Optional<String> mode = ConfigProvider.getConfig().getOptionalValue(property, String.class)
                .filter(value -> !"fail".equalsIgnoreCase(value));
        if (mode.isEmpty()) {
            return Optional.empty();
        }
        List<String> transactional = methods.methods().stream().filter(entry -> entry.info().isTransactional())
                .map(entry -> entry.info().getDescription()).toList();
        return transactional.isEmpty() ? Optional.empty()
                : Optional.of(new IdempotencyDefinitionException(Rule.MULTIPLE_LAST_RESOURCES, property,
                        transactional, mode.get()));
    }

    /**
     * A {@code @WithTransaction} method writes its key through its persistence unit's session: on that unit's datasource,
     * which must be the keys' one, or a blocking and a reactive consumer of one key would each find it free in a table of
     * its own.
     */
    private static List<IdempotencyDefinitionException> reactiveOnAnotherDataSource(IdempotencyBuildTimeConfig config,
            IdempotentMethodsBuildItem methods) {
        String keys = config.database().datasource().filter(n -> !DataSourceUtil.isDefault(n))
                .orElse(DataSourceUtil.DEFAULT_DATASOURCE_NAME);
        List<IdempotencyDefinitionException> found = new ArrayList<>();
        for (IdempotentMethodsBuildItem.Entry entry : methods.methods()) {
            if (!entry.info().isReactiveTransactional()) {
                continue;
            }
            String unit = entry.info().getReactivePersistenceUnit();
            boolean defaultUnit = "<default>".equals(unit);
            String property = defaultUnit ? "quarkus.hibernate-orm.datasource"
                    : "quarkus.hibernate-orm.\"" + unit + "\".datasource";
            String dataSource = ConfigProvider.getConfig().getOptionalValue(property, String.class)
                    .filter(n -> !DataSourceUtil.isDefault(n))
                    .orElse(DataSourceUtil.DEFAULT_DATASOURCE_NAME); // a unit without one is on the default
            if (!dataSource.equals(keys)) {
                found.add(new IdempotencyDefinitionException(Rule.REACTIVE_OTHER_DATASOURCE, entry.method(), unit,
                        dataSource, keys));
            }
        }
        return found;
    }

    static final class PurgeEnabled implements BooleanSupplier {
        private final IdempotencyBuildTimeConfig config;

        PurgeEnabled(IdempotencyBuildTimeConfig config) {
            this.config = config;
        }

        @Override
        public boolean getAsBoolean() {
            return config.purge().enabled();
        }
    }
}
