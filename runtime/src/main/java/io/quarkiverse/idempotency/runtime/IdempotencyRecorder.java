package io.quarkiverse.idempotency.runtime;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.SqlKeyStore;
import io.quarkus.arc.SyntheticCreationalContext;
import io.quarkus.runtime.LaunchMode;
import io.quarkus.runtime.annotations.Recorder;

/**
 * Turns what the build learnt about {@code @Idempotent} methods into runtime objects.
 */
@Recorder
public class IdempotencyRecorder {

    private static final Logger LOG = Logger.getLogger(IdempotencyRecorder.class);

    public Function<SyntheticCreationalContext<IdempotentMethods>, IdempotentMethods> methods(
            List<IdempotentMethodInfo> infos, Map<String, String> connectors, Map<String, Redelivery> redeliveries) {
        return context -> {
            IdempotencyStore store = context.getInjectedReference(IdempotencyStore.class);
            return new IdempotentMethods(infos, connectors, redeliveries,
                    context.getInjectedReference(IdempotencyConfig.class), store.joinsTransactions(),
                    store.commitsAsynchronously(),
                    // a table partitioned by time (read again at runtime: a migration may partition it) fails each
                    // reactive claim instead (SessionKeys)
                    store instanceof SqlKeyStore,
                    store.neverBlocks(), context.getInjectedReference(NonBlockingStore.class));
        };
    }

    public void filterOutcomeLogs() {
        OutcomeLogFilter.install();
    }

    public void warnAboutMemoryStore(LaunchMode mode) {
        if (mode == LaunchMode.NORMAL) {
            LOG.warn("quarkus.idempotency.store is 'memory' in production: every process remembers only its own keys,"
                    + " so a message redelivered to another instance (or after a restart) is handled again. Add"
                    + " quarkus-hibernate-orm-panache and a datasource and set quarkus.idempotency.store=database");
        }
    }
}
