package io.quarkiverse.idempotency.runtime;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkus.runtime.StartupEvent;

/**
 * Checks the store at startup: a store set up wrongly (the database store's table missing, a database that is not
 * PostgreSQL) stops the application with the remedy; a store that cannot be reached yet is only a warning (deliveries
 * are retried until it can).
 */
@Singleton
public class StoreCheck {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(StoreCheck.class);

    void check(@Observes StartupEvent event, IdempotencyStore store) {
        try {
            store.check();
        } catch (StoreMisconfiguredException e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.storeUncheckedAtStartup(e.toString());
        }
    }
}
