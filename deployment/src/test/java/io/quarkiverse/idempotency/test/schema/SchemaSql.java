package io.quarkiverse.idempotency.test.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import io.quarkiverse.idempotency.ClaimResult;
import io.quarkiverse.idempotency.ScopedKey;
import io.quarkiverse.idempotency.runtime.database.DatabaseIdempotencyStore;
import io.quarkiverse.idempotency.test.Sql;
import io.quarkiverse.idempotency.test.TestApps;

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
        String flag = "idempotency.test.setup." + test.getName();
        if (System.getProperty(flag) == null) {
            System.setProperty(flag, "done");
            setup.run();
        }
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

    /** Creates the first version's table under a name. */
    static void firstVersion(String table) {
        for (String statement : FIRST_VERSION) {
            run(statement.replace("%s", table));
        }
    }

    /**
     * Asserts that a first version's table (see {@link #FIRST_VERSION}) was brought up to date: its key still a fact,
     * the widened state constraint taking a dead letter with its attempts, the claims index there.
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
                + " WHERE scoped_key = 's:poison'"), "the widened constraint takes the new states");
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
                for (int i = 0; i < 600 && System.getProperty(release) == null; i++) {
                    Thread.sleep(100);
                }
                if (System.getProperty(release) == null) {
                    System.setProperty(gaveUp, "true");
                }
                c.rollback();
            } catch (SQLException | InterruptedException e) {
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
}
