package io.quarkiverse.idempotency.reactive;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import io.quarkiverse.idempotency.testing.TestServices;

/** The test's own JDBC view of the database: charges and idempotency keys. */
public final class Ledger {

    private Ledger() {
    }

    /** This module's own database, so that what its tests leave behind never meets the demo's migrations. */
    static final String DATABASE = "reactive_test";

    /** The setting that names the database of an application a test built, when not {@link #DATABASE}. */
    static final String DATABASE_SETTING = "idempotency-tests.database";

    /** @return the JDBC URL of the database of the application under test ({@link #DATABASE} unless it names another) */
    public static String url() {
        return TestServices.postgres().jdbcUrl(org.eclipse.microprofile.config.ConfigProvider.getConfig()
                .getOptionalValue(DATABASE_SETTING, String.class).orElse(DATABASE));
    }

    /** @return the charges of an order, by either consumer */
    public static long charges(String orderId) {
        return count("SELECT count(*) FROM charge WHERE order_id = ?", orderId);
    }

    /** @return the charges of orders whose id starts with a prefix */
    public static long chargesOf(String prefix) {
        return count("SELECT count(*) FROM charge WHERE order_id LIKE ?", prefix + "%");
    }

    /** @return the orders with a prefix charged at least once */
    public static long distinctChargesOf(String prefix) {
        return count("SELECT count(DISTINCT order_id) FROM charge WHERE order_id LIKE ?", prefix + "%");
    }

    /** @return the state of the key of an order (scope payments), or {@code null} when there is none */
    public static String state(String orderId) {
        return text("SELECT state FROM idempotency_record WHERE scope = 'payments' AND scoped_key LIKE ?",
                "%charge:" + orderId);
    }

    /** @return the failed attempts counted on the key of an order */
    public static long attempts(String orderId) {
        return count("SELECT coalesce(max(attempts), 0) FROM idempotency_record WHERE scope = 'payments'"
                + " AND scoped_key LIKE ?", "%charge:" + orderId);
    }

    /** @return keys of the payments scope that are claimed on a lease right now */
    public static long claims() {
        return count("SELECT count(*) FROM idempotency_record WHERE scope = 'payments' AND state = 'CLAIMED'");
    }

    /**
     * Holds the keys table against writes until the returned connection is closed (its transaction then rolls back):
     * statements that write keys wait for it, reads go on.
     */
    public static Connection holdKeysAgainstWrites() {
        try {
            Connection c = connect();
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("LOCK TABLE idempotency_record IN EXCLUSIVE MODE")) {
                ps.execute();
            }
            return c;
        } catch (SQLException e) {
            throw new IllegalStateException("LOCK TABLE idempotency_record", e);
        }
    }

    /**
     * Records an order's key as confirmed by another instance, in a commit that returned before it was durable (an
     * asynchronous one, as a channel with asynchronous-commit makes), without this process knowing it.
     */
    public static void confirmedElsewhereAsynchronously(String orderId) {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement off = c.prepareStatement("SET LOCAL synchronous_commit = off");
                    PreparedStatement ps = c.prepareStatement("INSERT INTO idempotency_record (scoped_key, scope, state,"
                            + " claimed_by, recorded_at, expires_at, attempts) VALUES (?, 'payments', 'CONFIRMED',"
                            + " 'elsewhere', now(), now() + interval '1 hour', 0)")) {
                off.execute();
                ps.setString(1, "payments:charge:" + orderId);
                ps.executeUpdate();
            }
            c.commit();
        } catch (SQLException e) {
            throw new IllegalStateException("confirm the key of " + orderId, e);
        }
    }

    private static long count(String sql, String... parameters) {
        String value = text(sql, parameters);
        return value == null ? 0 : Long.parseLong(value);
    }

    private static String text(String sql, String... parameters) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setString(i + 1, parameters[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    private static Connection connect() throws SQLException {
        return DriverManager.getConnection(url(), TestServices.postgres().user(), TestServices.postgres().password());
    }
}
