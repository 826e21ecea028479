package io.quarkiverse.idempotency.deployment;

import java.util.function.BooleanSupplier;

import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig.StoreKind;
import io.quarkiverse.idempotency.runtime.PurgeJob;
import io.quarkiverse.idempotency.runtime.database.AsynchronousClaimCommitCheck;
import io.quarkiverse.idempotency.runtime.database.DatabaseStoreProducer;
import io.quarkiverse.idempotency.runtime.database.IdempotencyRecord;
import io.quarkiverse.idempotency.runtime.database.SchemaManagement;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.datasource.common.runtime.DataSourceUtil;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.builditem.AdditionalIndexedClassesBuildItem;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.deployment.builditem.nativeimage.NativeImageResourceBuildItem;

/**
 * The database store: its entity, its beans, its startup check and the purge job. Every step runs only when the
 * database store is selected; none refers to Hibernate ORM's own build items, so this class loads in applications
 * without it.
 */
class DatabaseStoreProcessor {

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
    void entity(IdempotencyBuildTimeConfig config, Capabilities capabilities,
            BuildProducer<AdditionalIndexedClassesBuildItem> indexed, BuildProducer<AdditionalBeanBuildItem> beans,
            BuildProducer<NativeImageResourceBuildItem> resources) {
        if (!databaseStore(config, capabilities)) {
            return;
        }
        indexed.produce(new AdditionalIndexedClassesBuildItem(IdempotencyRecord.class.getName()));
        beans.produce(AdditionalBeanBuildItem.builder().addBeanClasses(DatabaseStoreProducer.class, SchemaManagement.class,
                AsynchronousClaimCommitCheck.class)
                .setUnremovable().build());
        resources.produce(new NativeImageResourceBuildItem(MIGRATIONS));
    }

    /**
     * The placeholders of the shipped repeatable Flyway migration default to the configured table, so that an
     * application adding its location needs nothing else, whatever its table is called.
     */
    @BuildStep
    void flywayPlaceholders(IdempotencyBuildTimeConfig config, Capabilities capabilities,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        if (!databaseStore(config, capabilities) || !capabilities.isPresent(Capability.FLYWAY)) {
            return;
        }
        String prefix = config.database().datasource().filter(name -> !DataSourceUtil.isDefault(name))
                .map(name -> "quarkus.flyway.\"" + name + "\".placeholders.")
                .orElse("quarkus.flyway.placeholders.");
        String table = config.database().table();
        defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "idempotency_table", table));
        defaults.produce(new RunTimeConfigurationDefaultBuildItem(prefix + "idempotency_table_name",
                table.substring(table.indexOf('.') + 1)));
    }

    /** The purge job exists only with the database store and purging enabled. */
    @BuildStep(onlyIf = PurgeEnabled.class)
    void purgeJob(IdempotencyBuildTimeConfig config, Capabilities capabilities,
            BuildProducer<AdditionalBeanBuildItem> beans) {
        if (databaseStore(config, capabilities)) {
            beans.produce(AdditionalBeanBuildItem.unremovableOf(PurgeJob.class));
        }
    }

    /** The database store is selected and can work (without Hibernate ORM, validation reports the selection). */
    static boolean databaseStore(IdempotencyBuildTimeConfig config, Capabilities capabilities) {
        return IdempotencyProcessor.storeKind(config, capabilities) == StoreKind.DATABASE
                && capabilities.isPresent(Capability.HIBERNATE_ORM);
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
