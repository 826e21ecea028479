package io.quarkiverse.idempotency.runtime.outbox;

import jakarta.annotation.Priority;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;
import jakarta.interceptor.Interceptor;

import io.quarkiverse.idempotency.runtime.IdempotencyConfig;
import io.quarkiverse.idempotency.runtime.IdempotencyConfig.SchemaManagement.Mode;
import io.quarkiverse.idempotency.runtime.IdempotencyLogger;
import io.quarkiverse.idempotency.runtime.StoreMisconfiguredException;
import io.quarkiverse.idempotency.runtime.WorkerId;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.StartupEvent;

/**
 * At startup: the outbox table created before the channels are wired ({@code schema-management=update}) or checked
 * after the key table, and the rows of earlier starts of this instance let go (they died before sending them).
 */
@Singleton
public class OutboxStartup {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(OutboxStartup.class);

    /** Creates the table, before the channels are wired, when the extension manages the schema. */
    void create(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) StartupEvent event, Outbox outbox,
            IdempotencyConfig config, WorkerId worker) {
        try {
            if (mode(config) == Mode.UPDATE) {
                outbox.table().create();
            }
            if (worker.instance() != null) {
                int released = outbox.releaseEarlierStarts(worker.instance() + "@");
                if (released > 0) {
                    LOG.outboxEarlierStarts(released, worker.instance());
                }
            }
        } catch (RuntimeException e) {
            // an unreachable database: the store's check says so, and the relay sends the rows once it answers
            LOG.schemaNotUpdated(e.getMessage());
        }
    }

    /** A missing table fails the startup, after the key table's own check (which names its remedy first). */
    void check(@Observes @Priority(Interceptor.Priority.APPLICATION + 501) StartupEvent event, Outbox outbox,
            IdempotencyConfig config) {
        OutboxTable table = outbox.table();
        boolean exists;
        boolean hasKeys;
        try {
            exists = mode(config) == Mode.UPDATE || table.exists();
            hasKeys = !exists || mode(config) == Mode.UPDATE || table.hasKeys();
        } catch (RuntimeException e) {
            return; // an unreachable database: the store's check says so
        }
        if (!hasKeys) {
            throw new StoreMisconfiguredException("The outbox table '" + table.name() + "' has no column message_key:"
                    + " an earlier build created it. Run ALTER TABLE " + table.name() + " ADD COLUMN message_key text"
                    + " (the Flyway script classpath:db/idempotency/outbox/flyway does), or set"
                    + " quarkus.idempotency.database.schema-management=update", null);
        }
        if (!exists) {
            throw new StoreMisconfiguredException("The outbox table '" + table.name() + "' does not exist. Add"
                    + " classpath:db/idempotency/outbox/flyway to quarkus.flyway.locations, set"
                    + " quarkus.idempotency.database.schema-management=update, or create it with: "
                    + String.join("; ", OutboxTable.schema(table.name())), null);
        }
    }

    private static Mode mode(IdempotencyConfig config) {
        return config.database().schemaManagement()
                .orElse(LaunchMode.current().isDevOrTest() ? Mode.UPDATE : Mode.VALIDATE);
    }
}
