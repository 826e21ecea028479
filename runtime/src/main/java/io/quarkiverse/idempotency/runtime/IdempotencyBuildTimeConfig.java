package io.quarkiverse.idempotency.runtime;

import java.util.Optional;

import io.quarkus.runtime.annotations.ConfigPhase;
import io.quarkus.runtime.annotations.ConfigRoot;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * Build-time configuration of the idempotency extension.
 */
@ConfigMapping(prefix = "quarkus.idempotency")
@ConfigRoot(phase = ConfigPhase.BUILD_AND_RUN_TIME_FIXED)
public interface IdempotencyBuildTimeConfig {

    /**
     * Which store remembers handled keys. {@code database} keeps them in a table through Hibernate ORM (the
     * production store, shared by every instance of the application); {@code memory} keeps them in this process
     * only, which is right for tests and wrong for production. When unset: {@code database} if the application has
     * Hibernate ORM, else {@code memory}, which a production start then refuses: set {@code memory} to choose it there.
     * An application bean implementing {@code IdempotencyStore} replaces either.
     */
    Optional<StoreKind> store();

    /**
     * The database store.
     */
    Database database();

    /**
     * The transactional outbox.
     */
    Outbox outbox();

    /**
     * The purge job, which deletes expired keys.
     */
    Purge purge();

    /**
     * The store's readiness check.
     */
    Health health();

    /**
     * The extension's metrics.
     */
    Metrics metrics();

    /**
     * Deliveries on the trace.
     */
    Tracing tracing();

    /**
     * The management endpoint for dead letters.
     */
    Management management();

    /**
     * The store's readiness check.
     */
    interface Health {

        /**
         * Whether the readiness check of the store is registered, when the application has SmallRye Health (whose
         * {@code quarkus.smallrye-health.extensions.enabled=false} also removes it).
         */
        @WithDefault("true")
        boolean enabled();
    }

    /**
     * The extension's metrics.
     */
    interface Metrics {

        /**
         * Whether the extension's meters are registered, when the application has Micrometer.
         */
        @WithDefault("true")
        boolean enabled();
    }

    /**
     * Deliveries on the trace.
     */
    interface Tracing {

        /**
         * Whether each delivery's outcome is recorded as a span, when the application has OpenTelemetry tracing
         * ({@code quarkus-opentelemetry}): a span per delivery named after its channel ({@code orders idempotency}
         * for the channel {@code orders}), a child of the message's consumer span, with the outcome, the key (as
         * stored: a digest under {@code key-storage=digest}), a duplicate's origin, a failed attempt's number and
         * budget, and the failure. Without OpenTelemetry nothing is recorded and nothing is paid.
         */
        @WithDefault("true")
        boolean enabled();
    }

    /**
     * The management endpoint for dead letters: {@code /q/idempotency/dead-letters} on the Quarkus management
     * interface ({@code quarkus.management.enabled=true}), which lists, shows and releases dead-lettered keys.
     */
    interface Management {

        /**
         * Whether the endpoint is registered. It needs the management interface ({@code quarkus.management.enabled})
         * and {@code quarkus-vertx-http} (which SmallRye Health and Micrometer bring), and refuses to start without
         * authentication on that interface ({@code quarkus.management.auth.basic=true}, or another mechanism) unless
         * {@code quarkus.idempotency.management.allow-unauthenticated} is set.
         */
        @WithDefault("false")
        boolean enabled();

        /**
         * The role a caller of the endpoint must have.
         */
        @WithDefault("idempotency-admin")
        String role();

        /**
         * Lets anyone who reaches the management interface call the endpoint, without authentication: for local use
         * only, where that interface listens on a loopback address.
         */
        @WithDefault("false")
        boolean allowUnauthenticated();
    }

    /**
     * The kinds of store.
     */
    enum StoreKind {
        /** A table, through Hibernate ORM. */
        DATABASE,
        /** This process's memory. */
        MEMORY
    }

    /**
     * The transactional outbox.
     */
    interface Outbox {

        /**
         * The name of the outbox table, on the datasource of the keys, optionally qualified by a schema. Letters,
         * digits and underscores only, starting with a letter or underscore.
         */
        @WithDefault("idempotency_outbox")
        String table();
    }

    /**
     * The database store.
     */
    interface Database {

        /**
         * The name of the table holding the keys, optionally qualified by a schema ({@code messaging.idempotency}).
         * Letters, digits and underscores only, starting with a letter or underscore.
         */
        @WithDefault("idempotency_record")
        String table();

        /**
         * The name of the datasource holding the table, when it is not the default one
         * ({@code quarkus.datasource."<name>".*}). The store runs its statements there. Keys are written inside a
         * {@code @Transactional} handler's transaction (mode {@code IN_TRANSACTION}) only when they live on the handlers'
         * datasource: the default one, or the only one. On a datasource of their own, every delivery claims and
         * confirms there on its own, on a lease (a handler's transaction cannot take a second non-XA datasource). For schema
         * generation or queries through the {@code IdempotencyRecord} entity, add its package
         * ({@code io.quarkiverse.idempotency.runtime.database}) to that datasource's persistence unit.
         */
        Optional<String> datasource();
    }

    /**
     * The purge job.
     */
    interface Purge {

        /**
         * Whether the purge job is registered. It is registered only with the database store; the memory store
         * forgets expired keys as it goes.
         */
        @WithDefault("true")
        boolean enabled();
    }
}
