package io.quarkiverse.idempotency.runtime;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.quarkus.arc.Arc;
import io.quarkus.arc.SyntheticCreationalContext;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.annotations.Recorder;

/**
 * Turns what the build learnt about {@code @Idempotent} methods into runtime objects.
 */
@Recorder
public class IdempotencyRecorder {

    private static final IdempotencyLogger LOG = IdempotencyLogger.of(IdempotencyRecorder.class);

    public Function<SyntheticCreationalContext<IdempotentMethods>, IdempotentMethods> methods(
            List<IdempotentMethodInfo> infos, Map<String, String> connectors, Map<String, Redelivery> redeliveries) {
        return context -> {
            IdempotencyStore store = context.getInjectedReference(IdempotencyStore.class);
            return new IdempotentMethods(infos, connectors, redeliveries,
                    context.getInjectedReference(IdempotencyConfig.class), store.joinsTransactions(),
                    store.commitsAsynchronously(),
                    store instanceof SqlKeyStore,
                    store.neverBlocks(), context.getInjectedReference(NonBlockingStore.class));
        };
    }

    public void filterOutcomeLogs() {
        OutcomeLogFilter.install();
    }

    /**
     * The memory store in production: refused unless chosen ({@code quarkus.idempotency.store=memory}), then warned
     * about. An application bean of its own replaces the memory store: nothing to say then.
     *
     * @param chosen whether {@code quarkus.idempotency.store} names the memory store
     * @throws StoreMisconfiguredException when the memory store would be used in production without being chosen
     */
    public void memoryStoreInProduction(LaunchMode mode, boolean chosen) {
        if (mode != LaunchMode.NORMAL
                || !Arc.container().select(IdempotencyStore.class).getHandle().getBean().isDefaultBean()) {
            return;
        }
        if (!chosen) {
            throw new StoreMisconfiguredException(MEMORY_STORE_REFUSED, null);
        }
        LOG.memoryStoreInProduction();
    }

    /** Why the memory store is refused in production when nobody chose it. */
    static final String MEMORY_STORE_REFUSED = "The idempotency keys would live in this process's memory in production:"
            + " the application has no database for them (a PostgreSQL JDBC datasource, with or without Hibernate ORM,"
            + " or the reactive PostgreSQL client), so every instance would remember only its own keys, and a message"
            + " redelivered to another instance, or after a restart, would be handled again. Add quarkus-jdbc-postgresql"
            + " (keys in a table shared by every instance), or choose the memory store with"
            + " quarkus.idempotency.store=memory";
}
