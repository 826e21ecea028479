package io.quarkiverse.idempotency.runtime.database;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.vertx.pgclient.PgException;

/** What tells a reactive writer that the table was moved to partitions under it. */
class ReactiveLayoutTest {

    @Test
    void anOnConflictWithoutAUniqueIndexIsALayoutChangeWhereverItIsInTheChain() {
        PgException noUniqueIndex = new PgException("there is no unique or exclusion constraint matching the ON CONFLICT"
                + " specification", "ERROR", "42P10", null);
        assertTrue(ReactiveLayout.changed(noUniqueIndex));
        // as Hibernate Reactive and the store's own messages wrap it
        assertTrue(ReactiveLayout.changed(new IllegalStateException("Could not claim key", new RuntimeException(
                noUniqueIndex))));
    }

    @Test
    void anyOtherFailureIsNot() {
        assertFalse(ReactiveLayout.changed(new PgException("duplicate key", "ERROR", "23505", null)));
        assertFalse(ReactiveLayout.changed(new IllegalStateException("42P10")));
        assertFalse(ReactiveLayout.changed(null));
    }
}
