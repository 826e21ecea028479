package io.quarkiverse.idempotency.deployment;

import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig.StoreKind;
import io.quarkus.builder.item.SimpleBuildItem;

/**
 * Which built-in store the application uses: {@code quarkus.idempotency.store}, else the database store when Hibernate
 * ORM or a PostgreSQL JDBC datasource is present. Produced by {@link IdempotencyProcessor}; consumed by the steps that differ
 * by store (the analysis,
 * the beans, the database store's steps).
 */
public final class SelectedStoreBuildItem extends SimpleBuildItem {

    private final StoreKind kind;
    private final boolean databaseReachable;
    private final boolean reactiveClientOnly;
    private final boolean entity;

    /**
     * @param databaseReachable whether the application reaches a database the store can use: through Hibernate ORM, a
     *        PostgreSQL JDBC datasource, or Hibernate Reactive
     * @param reactiveClientOnly whether the application reaches its database through the reactive PostgreSQL client
     *        only (Hibernate Reactive without a JDBC datasource)
     * @param entity whether the keys' table is also a Hibernate ORM Panache entity (with Hibernate ORM Panache)
     */
    public SelectedStoreBuildItem(StoreKind kind, boolean databaseReachable, boolean reactiveClientOnly,
            boolean entity) {
        this.kind = kind;
        this.databaseReachable = databaseReachable;
        this.reactiveClientOnly = reactiveClientOnly;
        this.entity = entity;
    }

    /** @return the selected store */
    public StoreKind kind() {
        return kind;
    }

    /** @return whether the memory store is selected */
    public boolean memory() {
        return kind == StoreKind.MEMORY;
    }

    /** @return whether the database store is selected and can work (without a datasource, validation says so) */
    public boolean database() {
        return kind == StoreKind.DATABASE && databaseReachable;
    }

    /** @return whether the database store is selected and its table is also a Panache entity of Hibernate ORM */
    public boolean entity() {
        return database() && entity;
    }

    /** @return whether the database store is selected and talks JDBC (Flyway, the JTA handlers) */
    public boolean jdbc() {
        return database() && !reactiveClientOnly;
    }

    /** @return whether the database store is selected and talks to the reactive PostgreSQL client only */
    public boolean reactiveClientOnly() {
        return database() && reactiveClientOnly;
    }
}
