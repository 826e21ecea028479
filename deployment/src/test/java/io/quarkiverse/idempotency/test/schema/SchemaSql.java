package io.quarkiverse.idempotency.test.schema;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.awaitility.core.ConditionTimeoutException;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.TableStatements;
import io.quarkiverse.idempotency.test.support.Sql;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkus.test.QuarkusUnitTest;

/** Statements run on the test database before an application starts. */
final class SchemaSql {

    /** The table as the extension's first versions created it (V1000 and V1001), with one confirmed key. */
    static final String[] FIRST_VERSION = {
            "CREATE TABLE %s (scoped_key VARCHAR(255) NOT NULL PRIMARY KEY, scope VARCHAR(255) NOT NULL,"
                    + " state VARCHAR(16) NOT NULL CHECK (state IN ('CLAIMED', 'CONFIRMED')), claimed_by VARCHAR(128),"
                    + " recorded_at TIMESTAMP WITH TIME ZONE NOT NULL, expires_at TIMESTAMP WITH TIME ZONE NOT NULL)",
            "CREATE INDEX %s_expires_at ON %s (expires_at)",
            "INSERT INTO %s VALUES ('s:handled-before', 's', 'CONFIRMED', 'old', now(), now() + interval '1 day')" };

    private SchemaSql() {
    }

    /**
     * Runs a test's setup once per JVM, before its application starts. A QuarkusUnitTest's class is initialised twice:
     * by JUnit before the application starts, then by the application's class loader once it has started, when a
     * setup that drops or creates tables would undo what startup did.
     */
    static void beforeStart(Class<?> test, Runnable setup) {
        beforeStart(test, "", setup);
    }

    /** {@link #beforeStart(Class, Runnable)}, for a second step of a test's setup. */
    static void beforeStart(Class<?> test, String step, Runnable setup) {
        String flag = "idempotency.test.setup." + test.getName() + step;
        if (System.getProperty(flag) == null) {
            System.setProperty(flag, "done");
            setup.run();
        }
    }

    /**
     * An application started on an unpartitioned table with {@code partitioning=time} and
     * {@code schema-management=update}, which moves it to partitions at startup; no purge job.
     *
     * @param incoming the incoming channels of {@code classes}
     */
    static QuarkusUnitTest movingAtStartup(String table, String[] incoming, Class<?>... classes) {
        Class<?>[] all = new Class<?>[classes.length + 2];
        all[0] = SchemaSql.class;
        all[1] = LayoutLogs.class;
        System.arraycopy(classes, 0, all, 2, classes.length);
        return TestApps.postgres(incoming, all)
                .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
                .overrideConfigKey("quarkus.idempotency.database.table", table)
                .overrideConfigKey("quarkus.idempotency.database.schema-management", "update")
                .overrideConfigKey("quarkus.idempotency.database.partitioning", "time")
                .overrideConfigKey("quarkus.idempotency.purge.every", "off");
    }

    static void run(String... statements) {
        try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(), TestApps.jdbcPassword());
                Statement s = c.createStatement()) {
            for (String statement : statements) {
                s.execute(statement);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Creates the first version's table under a name, then adds the columns the way Hibernate ORM's schema update
     * does (it adds columns, never widens a check constraint): the columns are there, the constraint is not.
     */
    static void hibernateUpgraded(String schema, String table) {
        List<String> statements = new ArrayList<>(List.of("SET search_path TO " + schema));
        for (String statement : FIRST_VERSION) {
            statements.add(statement.replace("%s", table));
        }
        for (String column : List.of("lease_until TIMESTAMP WITH TIME ZONE", "attempts INTEGER NOT NULL DEFAULT 0",
                "last_failure VARCHAR(1000)")) {
            statements.add("ALTER TABLE " + table + " ADD COLUMN " + column);
        }
        run(statements.toArray(String[]::new));
    }

    /**
     * Creates a table as version 1.1 created it: this version's columns and indexes, and the check constraint on its
     * state column that this version no longer has.
     */
    static void withStateCheck(String table) {
        List<String> statements = new ArrayList<>(TableStatements.schema(table));
        statements.add("ALTER TABLE " + table + " DROP CONSTRAINT IF EXISTS " + table + "_state_check, ADD CONSTRAINT "
                + table + "_state_check CHECK (state IN ('CLAIMED', 'CONFIRMED', 'FAILED', 'DEAD_LETTERED'))");
        run(statements.toArray(String[]::new));
    }

    /** @return how many check constraints the table has on its state column */
    static String stateChecks(Sql sql, String table) throws SQLException {
        return sql.query("SELECT count(*)::text FROM pg_constraint WHERE conrelid = '" + table + "'::regclass"
                + " AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%state%'");
    }

    /** Creates the first version's table under a name. */
    static void firstVersion(String table) {
        for (String statement : FIRST_VERSION) {
            run(statement.replace("%s", table));
        }
    }

    /**
     * Asserts that a first version's table (see {@link #FIRST_VERSION}) was brought up to date: its key still a fact,
     * its narrow state constraint gone (a dead letter written with its attempts), the claims index there.
     *
     * @param schema the table's schema
     * @param table the table's name, without its schema
     */
    static void assertUpToDate(DatabaseIdempotencyStore store, Sql sql, String schema, String table) throws SQLException {
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result(), "a key handled before the upgrade is still a fact");
        ScopedKey poison = new ScopedKey("s", "poison");
        store.claim(poison, "t#2", Duration.ofSeconds(30), Duration.ofHours(1));
        assertEquals(1, store.recordFailure(poison, "t#2", "boom", 1, Duration.ofHours(1)));
        assertEquals("DEAD_LETTERED 1", sql.query("SELECT state || ' ' || attempts FROM " + schema + "." + table
                + " WHERE scoped_key = 's:poison'"), "the new states are written");
        assertEquals("0", stateChecks(sql, schema + "." + table), "no state check constraint left");
        assertEquals(table + "_claims", sql.query("SELECT indexname FROM pg_indexes WHERE schemaname = '" + schema
                + "' AND tablename = '" + table + "' AND indexdef LIKE '%WHERE%CLAIMED%'"));
    }

    /**
     * Runs a statement in a transaction that a thread of the test keeps open until the system property {@code release}
     * is set (at most a minute; then it sets {@code gaveUp}), and rolls it back: another instance's transaction, in
     * the middle of its work while the application starts.
     */
    static void holdOpenTransaction(String statement, String release, String gaveUp) {
        CountDownLatch open = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            try (Connection c = DriverManager.getConnection(TestApps.jdbcUrl(), TestApps.jdbcUser(),
                    TestApps.jdbcPassword()); Statement s = c.createStatement()) {
                c.setAutoCommit(false);
                s.execute(statement);
                open.countDown();
                try {
                    await().atMost(Duration.ofMinutes(1)).until(() -> System.getProperty(release) != null);
                } catch (ConditionTimeoutException e) {
                    System.setProperty(gaveUp, "true");
                }
                c.rollback();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            } finally {
                open.countDown();
            }
        }, "open-transaction");
        holder.setDaemon(true);
        holder.start();
        try {
            open.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * An application whose schema Flyway owns with only the extension's repeatable migration, in a schema of its own
     * (baseline on migrate: the schema already has tables), the store validating as in production.
     */
    static QuarkusUnitTest flywayApp(String schema, String table) {
        return TestApps.postgres(new String[0], SchemaSql.class)
                .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
                .overrideConfigKey("quarkus.idempotency.database.table", schema + "." + table)
                .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
                .overrideConfigKey("quarkus.flyway.schemas", schema)
                .overrideConfigKey("quarkus.flyway.baseline-on-migrate", "true")
                .overrideConfigKey("quarkus.flyway.migrate-at-start", "true")
                .overrideConfigKey("quarkus.flyway.locations", "classpath:db/idempotency/flyway");
    }

    /**
     * An application validating an outdated table: its startup must fail with the outdated-table error, whose message
     * contains each of {@code expected} (what is missing, the statements that add it).
     */
    static QuarkusUnitTest validateFailsNaming(String table, String... expected) {
        return TestApps.postgres(new String[0], SchemaSql.class)
                .overrideConfigKey("quarkus.hibernate-orm.schema-management.strategy", "none")
                .overrideConfigKey("quarkus.idempotency.database.table", table)
                .overrideConfigKey("quarkus.idempotency.database.schema-management", "validate")
                .assertException(t -> {
                    for (Throwable c = t; c != null; c = c.getCause()) {
                        String m = c.getMessage();
                        if (m != null && m.contains("The idempotency table '" + table + "' is from an older version")) {
                            for (String part : expected) {
                                if (!m.contains(part)) {
                                    throw new AssertionError("the message must name what is missing and the remedy ("
                                            + part + "): " + m);
                                }
                            }
                            return;
                        }
                    }
                    throw new AssertionError("expected the outdated-table error", t);
                });
    }

    /** Asserts that a first version's table was moved: partitioned, the old table its first partition, its key kept. */
    static void assertMoved(DatabaseIdempotencyStore store, Sql sql, String table) throws SQLException {
        assertEquals("p", sql.query("SELECT relkind::text FROM pg_class WHERE oid = '" + table + "'::regclass"));
        assertTrue(store.partitioned());
        assertEquals(table, sql.query("SELECT inhparent::regclass::text FROM pg_inherits WHERE inhrelid = '" + table
                + "_plegacy'::regclass"));
        assertEquals(ClaimResult.DONE, store.claim(new ScopedKey("s", "handled-before"), "t#1", Duration.ofSeconds(30),
                Duration.ofHours(1)).result(), "the old table's key is honoured");
        assertEquals(ClaimResult.NEW, store.claim(new ScopedKey("s", "new"), "t#2", Duration.ofSeconds(30),
                Duration.ofHours(1)).result());
    }
}
