package io.quarkiverse.idempotency.runtime.database;

import org.eclipse.microprofile.config.ConfigProvider;
import org.hibernate.boot.ResourceStreamLocator;
import org.hibernate.boot.spi.AdditionalMappingContributions;
import org.hibernate.boot.spi.AdditionalMappingContributor;
import org.hibernate.boot.spi.InFlightMetadataCollector;
import org.hibernate.boot.spi.MetadataBuildingContext;
import org.hibernate.mapping.PersistentClass;
import org.hibernate.mapping.Table;

/**
 * Maps {@link IdempotencyRecord} to the table named by {@code quarkus.idempotency.database.table}, so that schema
 * generation, the entity's queries and the store's statements all use one table. A Hibernate ORM service (found
 * through {@code META-INF/services}), so it runs only where Hibernate ORM does.
 */
public class TableNameContributor implements AdditionalMappingContributor {

    @Override
    public String getContributorName() {
        return "quarkus-idempotency";
    }

    @Override
    public void contribute(AdditionalMappingContributions contributions, InFlightMetadataCollector metadata,
            ResourceStreamLocator resources, MetadataBuildingContext context) {
        String table = ConfigProvider.getConfig().getOptionalValue("quarkus.idempotency.database.table", String.class)
                .orElse(IdempotencyRecord.DEFAULT_TABLE);
        PersistentClass entity = metadata.getEntityBinding(IdempotencyRecord.class.getName());
        if (entity == null || IdempotencyRecord.DEFAULT_TABLE.equals(table)) {
            return;
        }
        Table mapped = entity.getTable();
        int dot = table.indexOf('.');
        if (dot > 0) {
            mapped.setSchema(table.substring(0, dot));
            mapped.setName(table.substring(dot + 1));
        } else {
            mapped.setName(table);
        }
    }
}
