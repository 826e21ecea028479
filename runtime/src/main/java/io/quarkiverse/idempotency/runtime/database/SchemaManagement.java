package io.quarkiverse.idempotency.runtime.database;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.SchemaManagement.Mode;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;

/**
 * At startup, before the store is checked: creates the table of the database store, or brings it up to date, when
 * {@code quarkus.idempotency.database.schema-management} says so (by default in dev and test mode).
 */
@Singleton
public class SchemaManagement {

    private static final Logger LOG = Logger.getLogger(SchemaManagement.class);

    void update(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) StartupEvent event,
            IdempotencyConfig config, IdempotencyStore active) {
        // an application's own store replaces the database store: its table is none of this extension's business
        if (!(active instanceof DatabaseIdempotencyStore store)) {
            return;
        }
        Mode mode = config.database().schemaManagement()
                .orElse(LaunchMode.current().isDevOrTest() ? Mode.UPDATE : Mode.VALIDATE);
        if (mode != Mode.UPDATE) {
            return;
        }
        try {
            store.updateSchema();
        } catch (RuntimeException e) {
            // an unreachable database: the store check says so, and deliveries are retried until it answers
            LOG.warnf("Could not create or update the idempotency table at startup: %s", e.getMessage());
        }
    }
}
