package io.quarkiverse.idempotency.test.schema;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

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

    /** Creates the first version's table under a name. */
    static void firstVersion(String table) {
        for (String statement : FIRST_VERSION) {
            run(statement.replace("%s", table));
        }
    }
}
