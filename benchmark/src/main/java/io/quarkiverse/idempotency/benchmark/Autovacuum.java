package io.quarkiverse.idempotency.benchmark;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import javax.sql.DataSource;

/**
 * PostgreSQL's autovacuum for the length of a soak, as production runs it. A server started with {@code autovacuum =
 * off} in a configuration file (this machine's CI setting, for steady tests) would otherwise never vacuum nor analyse
 * the soak's tables: dead rows never reused, plans made on an empty table kept for the whole run, which is not what a
 * user's database does. Turned on with {@code ALTER SYSTEM} and a reload (a superuser's right), put back as it was on
 * {@link #close()}; left alone when it is on already or set by an earlier {@code ALTER SYSTEM}.
 */
final class Autovacuum implements AutoCloseable {

    private final DataSource dataSource;
    private final boolean turnedOn;
    private final Thread restore;
    private boolean closed;

    private Autovacuum(DataSource dataSource, boolean turnedOn) {
        this.dataSource = dataSource;
        this.turnedOn = turnedOn;
        this.restore = new Thread(this::close);
        if (turnedOn) {
            Runtime.getRuntime().addShutdownHook(restore);
        }
    }

    /** Turns autovacuum on when it is off; says so, or says why it could not. */
    static Autovacuum on(DataSource dataSource) throws Exception {
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT setting, coalesce(sourcefile, ''),"
                        + " (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)"
                        + " FROM pg_settings WHERE name = 'autovacuum'")) {
            rs.next();
            if (rs.getString(1).equals("on")) {
                return new Autovacuum(dataSource, false);
            }
            if (rs.getString(2).endsWith("postgresql.auto.conf") || !rs.getBoolean(3)) {
                System.out.println("   (autovacuum is off on this server and is left so: dead rows are not reclaimed and"
                        + " plans not renewed as in a production database)");
                return new Autovacuum(dataSource, false);
            }
            reload(s, "ALTER SYSTEM SET autovacuum = on");
            System.out.println("   (autovacuum, off on this server, is on for the run, as in production)");
            return new Autovacuum(dataSource, true);
        }
    }

    @Override
    public synchronized void close() {
        if (!turnedOn || closed) {
            return;
        }
        closed = true;
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            reload(s, "ALTER SYSTEM RESET autovacuum");
        } catch (Exception e) {
            System.err.println("autovacuum could not be put back off (ALTER SYSTEM RESET autovacuum): " + e);
        }
        if (Thread.currentThread() != restore) {
            Runtime.getRuntime().removeShutdownHook(restore);
        }
    }

    private static void reload(Statement s, String alter) throws Exception {
        s.execute(alter);
        s.execute("SELECT pg_reload_conf()");
    }
}
