package io.quarkiverse.idempotency.kafka.it;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.quarkiverse.idempotency.testing.TestServices;

/** The charges and keys the application wrote, read straight from PostgreSQL (schema {@code kafka_demo}). */
public final class Charges {

    private Charges() {
    }

    /** @return the JDBC URL of the application's schema */
    public static String url() {
        return TestServices.postgres().jdbcUrl("test") + "?currentSchema=kafka_demo";
    }

    /** @return how many charges the order has */
    public static long of(String orderId) {
        return count("SELECT count(*) FROM charge WHERE order_id = ?", orderId);
    }

    /** @return how many charges the orders whose id is LIKE {@code pattern} have */
    public static long like(String pattern) {
        return count("SELECT count(*) FROM charge WHERE order_id LIKE ?", pattern);
    }

    /** @return how many orders whose id is LIKE {@code pattern} have a charge */
    public static long distinctOrdersLike(String pattern) {
        return count("SELECT count(DISTINCT order_id) FROM charge WHERE order_id LIKE ?", pattern);
    }

    /** @return the orders among {@code orderIds} that were charged, in the order they were charged */
    public static List<String> chargedInOrder(String... orderIds) {
        List<String> charged = new ArrayList<>();
        try (Connection c = connect();
                PreparedStatement ps = c.prepareStatement("SELECT order_id FROM charge WHERE order_id = ANY (?)"
                        + " ORDER BY id")) {
            ps.setArray(1, c.createArrayOf("varchar", orderIds));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    charged.add(rs.getString(1));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return charged;
    }

    /** @return how many events whose payload is LIKE {@code pattern} were logged */
    public static long eventsLike(String pattern) {
        return count("SELECT count(*) FROM event_log WHERE payload LIKE ?", pattern);
    }

    /** Runs a statement with parameters. */
    public static void execute(String sql, Object... parameters) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setObject(i + 1, parameters[i]);
            }
            ps.execute();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** @return the number a counting query returns */
    public static long count(String sql, Object... parameters) {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                ps.setObject(i + 1, parameters[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    private static Connection connect() throws SQLException {
        TestServices.Server db = TestServices.postgres();
        return DriverManager.getConnection(url(), db.user(), db.password());
    }
}
