package io.quarkiverse.idempotency.runtime.database;

import java.util.Set;

import org.eclipse.microprofile.config.ConfigProvider;
import org.hibernate.boot.ResourceStreamLocator;
import org.hibernate.boot.model.relational.SimpleAuxiliaryDatabaseObject;
import org.hibernate.boot.spi.AdditionalMappingContributions;
import org.hibernate.boot.spi.AdditionalMappingContributor;
import org.hibernate.boot.spi.InFlightMetadataCollector;
import org.hibernate.boot.spi.MetadataBuildingContext;
import org.hibernate.mapping.PersistentClass;
import org.hibernate.mapping.Table;

/**
 * Maps {@link IdempotencyRecord} to the table named by {@code quarkus.idempotency.database.table}, so that schema
 * generation, the entity's queries and the store's statements all use one table, and gives schema generation the
 * partial index of live claims that an annotation cannot express (the age of the oldest claim reads only that index).
 * A Hibernate ORM service (found through {@code META-INF/services}), so it runs only where Hibernate ORM does.
 */
public class TableNameContributor implements AdditionalMappingContributor {

    private static final String ENTITY = "io.quarkiverse.idempotency.runtime.database.IdempotencyRecord";

    @Override
    public String getContributorName() {
        return "quarkus-idempotency";
    }

    @Override
    public void contribute(AdditionalMappingContributions contributions, InFlightMetadataCollector metadata,
            ResourceStreamLocator resources, MetadataBuildingContext context) {
        // by name: with Hibernate Reactive and no JDBC, the entity (a Hibernate ORM Panache one) is absent, and its class
        // cannot be loaded
        PersistentClass entity = metadata.getEntityBinding(ENTITY);
        if (entity == null) {
            return;
        }
        String table = ConfigProvider.getConfig().getOptionalValue("quarkus.idempotency.database.table", String.class)
                .orElse(IdempotencyRecord.DEFAULT_TABLE);
        int dot = table.indexOf('.');
        String schema = dot > 0 ? table.substring(0, dot) : null;
        String name = dot > 0 ? table.substring(dot + 1) : table;
        if (!IdempotencyRecord.DEFAULT_TABLE.equals(table)) {
            Table mapped = entity.getTable();
            if (schema != null) {
                mapped.setSchema(schema);
            }
            mapped.setName(name);
            // index names are per schema in PostgreSQL: the entity's own would clash with another table's, as the
            // extension's statements, migrations and changelog name them after the table
            for (org.hibernate.mapping.Index index : mapped.getIndexes().values()) {
                if (index.getName().startsWith(IdempotencyRecord.DEFAULT_TABLE + "_")) {
                    index.setName(name + index.getName().substring(IdempotencyRecord.DEFAULT_TABLE.length()));
                }
            }
        }
        String index = name + "_claims";
        metadata.getDatabase().addAuxiliaryDatabaseObject(new SimpleAuxiliaryDatabaseObject(
                metadata.getDatabase().getDefaultNamespace(),
                "CREATE INDEX IF NOT EXISTS " + index + " ON " + table + " (recorded_at) WHERE state = 'CLAIMED'",
                "DROP INDEX IF EXISTS " + (schema == null ? "" : schema + ".") + index, Set.of()));
    }
}
