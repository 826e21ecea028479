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

    public SelectedStoreBuildItem(StoreKind kind, boolean hibernateOrm) {
        this.kind = kind;
        this.hibernateOrm = hibernateOrm;
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
}
