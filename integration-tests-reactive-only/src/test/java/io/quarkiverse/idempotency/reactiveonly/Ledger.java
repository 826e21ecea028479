package io.quarkiverse.idempotency.reactiveonly;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;

import io.quarkiverse.idempotency.testing.TestServices;

/** The test's own view of the database (over JDBC, which the application itself does not have): charges and keys. */
final class Ledger {

    private Ledger() {
    }

    static long charges(String orderId) {
        return count("SELECT count(*) FROM charge WHERE order_id = ?", orderId);
    }

    static long chargesOf(String prefix) {
        return count("SELECT count(*) FROM charge WHERE order_id LIKE ?", prefix + "%");
    }

    static long distinctChargesOf(String prefix) {
        return count("SELECT count(DISTINCT order_id) FROM charge WHERE order_id LIKE ?", prefix + "%");
    }

    static String state(String orderId) {
        return text("SELECT state FROM idempotency_record WHERE scoped_key = ?", "payments:charge:" + orderId);
    }

    static long attempts(String orderId) {
        return count("SELECT attempts FROM idempotency_record WHERE scoped_key = ?", "payments:charge:" + orderId);
    }

    static long claims() {
        return count("SELECT count(*) FROM idempotency_record WHERE state = 'CLAIMED'");
    }

    static long keys(String scope) {
        return count("SELECT count(*) FROM idempotency_record WHERE scope = ?", scope);
    }

    static void update(String sql, String... parameters) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setString(i + 1, parameters[i]);
            }
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    static long count(String sql, String... parameters) {
        String value = text(sql, parameters);
        return value == null ? 0 : Long.parseLong(value);
    }

    static String text(String sql, String... parameters) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setString(i + 1, parameters[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    // The driver itself, not DriverManager: the test runs in the application's class loader, which has no JDBC driver
    // for DriverManager to find (the test's own is on the test classpath only).
    private static Connection connect() throws SQLException {
        TestServices.Server db = TestServices.postgres();
        Properties credentials = new Properties();
        credentials.setProperty("user", db.user());
        credentials.setProperty("password", db.password());
        return new org.postgresql.Driver().connect(db.jdbcUrl(ReactiveOnlyServices.DATABASE), credentials);
    }
}
