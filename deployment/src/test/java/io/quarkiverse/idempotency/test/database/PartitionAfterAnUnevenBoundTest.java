package io.quarkiverse.idempotency.test.database;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
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
 * Partitions made after one whose bound is not a whole millisecond start exactly at it. The move of an existing table
 * leaves its old table as the first partition, of every expiry up to a bound read from the clock, in microseconds;
 * the partitions' bounds were read back in whole milliseconds, rounded, so the next partition started up to half a
 * millisecond before that bound, which PostgreSQL refuses as an overlap: every write needing a partition then failed
 * (seen in PartitionMigrationTest, once in two runs, as the rounding went).
 */
class PartitionAfterAnUnevenBoundTest {

    static final String TABLE = "uneven_bound_keys";

    static {
        // made afresh by the application: partitions an earlier run made would still be known to reach beyond the
        // test's key once the test replaced them (once per JVM: this class is initialised again inside the application)
        if (System.getProperty(TABLE + ".dropped") == null) {
            System.setProperty(TABLE + ".dropped", "true");
            try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(),
                    TestApps.jdbcPassword()); Statement s = c.createStatement()) {
                s.execute("DROP TABLE IF EXISTS " + TABLE + " CASCADE");
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.postgres(new String[0])
            .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
            .overrideConfigKey("quarkus.idempotency.database.table", TABLE)
            .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
            .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
            .overrideConfigKey("quarkus.idempotency.database.partition-period", "1h")
            .overrideConfigKey("quarkus.idempotency.retention", "1h")
            .overrideConfigKey("quarkus.idempotency.purge.every", "1h");

    @Inject
    DatabaseIdempotencyStore store;

    @Inject
    AgroalDataSource dataSource;

    @Test
    void theNextPartitionStartsExactlyAtTheBound() throws Exception {
        Sql sql = new Sql(dataSource);
        // the partitions made at startup replaced by one of every expiry up to a bound 224 microseconds past a second,
        // two hours ahead: what the move of a table leaves
        sql.execute("DO $$ DECLARE p regclass; BEGIN FOR p IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent"
                + " = '" + TABLE + "'::regclass LOOP EXECUTE format('ALTER TABLE " + TABLE + " DETACH PARTITION %s', p);"
                + " EXECUTE format('DROP TABLE %s', p); END LOOP; END $$");
        sql.execute("CREATE TABLE " + TABLE + "_pfirst (LIKE " + TABLE + " INCLUDING DEFAULTS INCLUDING CONSTRAINTS)");
        String bound = sql.query("SELECT (date_trunc('second', now()) + interval '2 hours 224 microseconds')::text");
        sql.execute("ALTER TABLE " + TABLE + " ATTACH PARTITION " + TABLE + "_pfirst FOR VALUES FROM (MINVALUE) TO ('"
                + bound + "')");

        // a key kept three hours: beyond the partitions known in memory, so the ones after the bound are made
        ScopedKey key = new ScopedKey("uneven", "k");
        assertEquals(ClaimResult.NEW, store.claim(key, "t", Duration.ofSeconds(30), Duration.ofHours(3)).result());

        assertEquals("1", sql.query("SELECT count(*)::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                + " WHERE i.inhparent = '" + TABLE + "'::regclass AND (regexp_match(pg_get_expr(c.relpartbound, c.oid),"
                + " 'FROM \\(''([^'']*)''\\)'))[1]::timestamptz = '" + bound + "'::timestamptz"),
                "one partition starts exactly where the first one ends, " + bound);
        assertEquals("true", sql.query("SELECT (tableoid <> '" + TABLE + "_pfirst'::regclass)::text FROM " + TABLE
                + " WHERE scoped_key = 'uneven:k'"), "the key is in a partition after the bound");
        assertEquals(ClaimResult.DONE, confirmedAgain(key));
    }

    private ClaimResult confirmedAgain(ScopedKey key) {
        store.confirm(key, "t", Duration.ofHours(3));
        return store.claim(key, "u", Duration.ofSeconds(30), Duration.ofHours(3)).result();
    }
}
