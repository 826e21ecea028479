package io.quarkiverse.idempotency.runtime.database;

import java.sql.SQLException;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkus.runtime.StartupEvent;

/**
 * Fails startup when the table of the database store is missing, naming the remedy; a database that cannot be
 * reached at startup is only a warning (deliveries are retried until it can).
 */
@Singleton
public class TableCheck {

    private static final Logger LOG = Logger.getLogger(TableCheck.class);
    private static final String UNDEFINED_TABLE = "42P01";

    void check(@Observes StartupEvent event, IdempotencyBuildTimeConfig config, DatabaseIdempotencyStore store) {
        String table = config.database().table();
        try {
            store.check();
        } catch (RuntimeException e) {
            if (UNDEFINED_TABLE.equals(sqlState(e))) {
                throw new IllegalStateException(missingTable(table), e);
            }
            LOG.warnf("Could not check the idempotency table '%s' at startup (%s); deliveries will be retried until"
                    + " the database answers", table, e.toString());
        }
    }

    /** @return the message naming the remedy for a missing table */
    public static String missingTable(String table) {
        return "The idempotency table '" + table + "' does not exist. Create it with"
                + " the migration shipped in the extension (classpath:db/idempotency/postgresql, e.g."
                + " quarkus.flyway.locations=db/migration,classpath:db/idempotency/postgresql), or let"
                + " Hibernate ORM create it (quarkus.hibernate-orm.schema-management.strategy=update)";
    }

    static String sqlState(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException sql && sql.getSQLState() != null) {
                return sql.getSQLState();
            }
        }
        return null;
    }
}
