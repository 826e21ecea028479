package io.quarkiverse.idempotency.benchmark;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * PostgreSQL's autovacuum for the length of a soak, as production runs it. A server started with {@code autovacuum =
 * off} in a configuration file (this machine's CI setting, for steady tests) would otherwise never vacuum nor analyse
 * the soak's tables: dead rows never reused, plans made on an empty table kept for the whole run, which is not what a
 * user's database does. Turned on with {@code ALTER SYSTEM} and a reload (a superuser's right), put back as it was on
 * {@link #close()} or when this process stops; left alone when it is on already, or off by any other means than a
 * configuration file (the command line, an earlier {@code ALTER SYSTEM}). The connection is its own, opened at the
 * start, so that the setting can be put back while the application's pool is closing.
 */
final class Autovacuum implements AutoCloseable {

    private final Connection connection;
    private final Thread restore;
    private boolean closed;

    private Autovacuum(Connection connection) {
        this.connection = connection;
        this.restore = connection == null ? null : new Thread(this::close, "bench-autovacuum-restore");
        if (restore != null) {
            Runtime.getRuntime().addShutdownHook(restore);
        }
    }

    /** Turns autovacuum on when a configuration file has it off; says so, or says why it did not. */
    static Autovacuum on() throws SQLException {
        Config config = ConfigProvider.getConfig();
        Connection c = DriverManager.getConnection(config.getValue("quarkus.datasource.jdbc.url", String.class),
                config.getOptionalValue("quarkus.datasource.username", String.class).orElse(null),
                config.getOptionalValue("quarkus.datasource.password", String.class).orElse(null));
        try (Statement s = c.createStatement()) {
            String setting;
            String source;
            String file;
            boolean superuser;
            try (ResultSet rs = s.executeQuery("SELECT setting, source, coalesce(sourcefile, ''),"
                    + " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"
                    + " FROM pg_settings WHERE name = 'autovacuum'")) {
                rs.next();
                setting = rs.getString(1);
                source = rs.getString(2);
                file = rs.getString(3);
                superuser = rs.getBoolean(4);
            }
            if (setting.equals("on")) {
                if (file.endsWith("postgresql.auto.conf")) {
                    System.out.println("   (autovacuum is on from postgresql.auto.conf: if a soak was interrupted before it"
                            + " could put it back, ALTER SYSTEM RESET autovacuum and reload)");
                }
                c.close();
                return new Autovacuum(null);
            }
            if (!source.equals("configuration file") || file.endsWith("postgresql.auto.conf") || !superuser) {
                System.out.println("   (autovacuum is off on this server (" + source + ") and is left so: dead rows are not"
                        + " reclaimed and plans not renewed as in a production database)");
                c.close();
                return new Autovacuum(null);
            }
            reload(s, "ALTER SYSTEM SET autovacuum = on");
            System.out.println(setting(s, "on")
                    ? "   (autovacuum, off on this server, is on for the run, as in production)"
                    : "   (autovacuum could not be turned on: the soak runs without it)");
            return new Autovacuum(c);
        } catch (SQLException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    @Override
    public synchronized void close() {
        if (connection == null || closed) {
            return;
        }
        closed = true;
        try (Connection c = connection; Statement s = c.createStatement()) {
            reload(s, "ALTER SYSTEM RESET autovacuum");
        } catch (SQLException e) {
            System.err.println("autovacuum could not be put back off (ALTER SYSTEM RESET autovacuum): " + e);
        }
        if (Thread.currentThread() != restore) {
            try {
                Runtime.getRuntime().removeShutdownHook(restore);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs, finds it closed
            }
        }
    }

    /**
     * @return whether this session sees autovacuum set as expected within two seconds: a reload is a signal, which a
     *         session takes in between its statements, so the statement right after {@code pg_reload_conf()} may still
     *         see the old setting (it did: the soak said autovacuum could not be turned on while the server had it on)
     */
    private static boolean setting(Statement s, String expected) throws SQLException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (true) {
            try (ResultSet rs = s.executeQuery("SELECT current_setting('autovacuum')")) {
                rs.next();
                if (rs.getString(1).equals(expected) || System.nanoTime() > deadline) {
                    return rs.getString(1).equals(expected);
                }
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }

    private static void reload(Statement s, String alter) throws SQLException {
        s.execute(alter);
        s.execute("SELECT pg_reload_conf()");
    }
}
