package io.quarkiverse.idempotency.deployment;

import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig.StoreKind;
import io.quarkus.builder.item.SimpleBuildItem;

/**
 * Which built-in store the application uses: {@code quarkus.idempotency.store}, else the database store when Hibernate
 * ORM is present. Produced by {@link IdempotencyProcessor}; consumed by the steps that differ by store (the analysis,
 * the beans, the database store's steps).
 */
public final class SelectedStoreBuildItem extends SimpleBuildItem {

    private final StoreKind kind;
    private final boolean hibernateOrm;
    private final boolean reactiveClientOnly;

    public SelectedStoreBuildItem(StoreKind kind, boolean hibernateOrm) {
        this(kind, hibernateOrm, false);
    }

    /**
     * @param reactiveClientOnly whether the application reaches its database through the reactive PostgreSQL client
     *        only (Hibernate Reactive without a JDBC datasource)
     */
    public SelectedStoreBuildItem(StoreKind kind, boolean hibernateOrm, boolean reactiveClientOnly) {
        this.kind = kind;
        this.hibernateOrm = hibernateOrm;
        this.reactiveClientOnly = reactiveClientOnly;
    }

    /** @return the selected store */
    public StoreKind kind() {
        return kind;
    }

    /** @return whether the memory store is selected */
    public boolean memory() {
        return kind == StoreKind.MEMORY;
    }

    /** @return whether the database store is selected and can work (without Hibernate ORM, validation says so) */
    public boolean database() {
        return kind == StoreKind.DATABASE && hibernateOrm;
    }

    /** @return whether the database store is selected and talks JDBC (its Panache entity, Flyway, the JTA handlers) */
    public boolean jdbc() {
        return database() && !reactiveClientOnly;
    }

    /** @return whether the database store is selected and talks to the reactive PostgreSQL client only */
    public boolean reactiveClientOnly() {
        return database() && reactiveClientOnly;
    }
}
