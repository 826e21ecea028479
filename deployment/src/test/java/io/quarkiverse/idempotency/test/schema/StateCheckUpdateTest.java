package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/**
 * A table as version 1.1 created it, with a check constraint listing the states on its state column (PostgreSQL
 * prepares it again for every statement writing a row: 10-15 us a write), and a second such list, loses both under
 * {@code schema-management=update}, and only them: an operator's own checks stay. Its keys stay, and every state is
 * written.
 */
class StateCheckUpdateTest {

    static {
        SchemaSql.beforeStart(StateCheckUpdateTest.class, () -> {
            SchemaSql.run("DROP TABLE IF EXISTS checked_keys CASCADE");
            SchemaSql.withStateCheck("checked_keys");
            // a second list of the states under another name (as a table Hibernate ORM made and the extension then
            // managed could have), and two checks of an operator's own, one of them on the state column
            SchemaSql.run("ALTER TABLE checked_keys ADD CONSTRAINT checked_keys_state_check1 CHECK (state IN"
                    + " ('CLAIMED', 'CONFIRMED'))",
                    "ALTER TABLE checked_keys ADD CONSTRAINT operators_attempts CHECK (attempts >= 0)",
                    "ALTER TABLE checked_keys ADD CONSTRAINT operators_leases CHECK (state <> 'CLAIMED' OR lease_until"
                            + " IS NOT NULL)");
            SchemaSql.run("INSERT INTO checked_keys (scoped_key, scope, state, recorded_at, expires_at) VALUES"
                    + " ('s:handled-before', 's', 'CONFIRMED', now(), now() + interval '1 day')");
        });
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0], SchemaSql.class)
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", "checked_keys")
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "none");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theConstraintIsDroppedAndEveryStateWritten() throws SQLException {
        Sql sql = new Sql(dataSource);
        assertEquals("operators_attempts operators_leases", sql.query("SELECT string_agg(conname, ' ' ORDER BY"
                + " conname) FROM pg_constraint WHERE conrelid = 'checked_keys'::regclass AND contype = 'c'"),
                "both lists of the states dropped, the operator's own checks kept");
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result(), "a key handled before is still a fact");
        ScopedKey key = new ScopedKey("s", "new");
        assertEquals(ClaimResult.NEW, store.claim(key, "t#2", Duration.ofSeconds(30), Duration.ofHours(1)).result());
        assertTrue(store.confirm(key, "t#2", Duration.ofHours(1)));
        ScopedKey poison = new ScopedKey("s", "poison");
        store.claim(poison, "t#3", Duration.ofSeconds(30), Duration.ofHours(1));
        assertEquals(1, store.recordFailure(poison, "t#3", "boom", 1, Duration.ofHours(1)));
        assertEquals("CONFIRMED DEAD_LETTERED", sql.query("SELECT string_agg(state, ' ' ORDER BY scoped_key) FROM"
                + " checked_keys WHERE scoped_key IN ('s:new', 's:poison')"));
    }
}
