package io.quarkiverse.idempotency.it;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import io.quarkiverse.idempotency.testing.TestServices;

/**
 * The test's own JDBC view of the database: charges, audit entries, idempotency keys.
 */
public final class Ledger {

    private Ledger() {
    }

    /** The demo's database (test) on the tests' PostgreSQL, the one TEST_POSTGRES names or a container. */
    public static String url() {
        return TestServices.postgres().jdbcUrl("test");
    }

    public static String user() {
        return TestServices.postgres().user();
    }

    public static String password() {
        return TestServices.postgres().password();
    }

    /** Forgets every charge, audit entry and key of the demo's channels. */
    public static void reset() {
        execute("DELETE FROM charge");
        execute("DELETE FROM payment_audit");
        execute("DELETE FROM receipt");
        execute("DELETE FROM idempotency_outbox");
        execute("DELETE FROM idempotency_record WHERE scope IN ('payments', 'payments-audit', 'receipts')");
    }

    /** @return the receipts the downstream consumer recorded for orders whose ids start with {@code prefix} */
    public static long receipts(String prefix) {
        return count("SELECT count(*) FROM receipt WHERE starts_with(order_id, '" + prefix + "')");
    }

    /** @return the orders whose ids start with {@code prefix} that have a receipt */
    public static long distinctReceiptOrders(String prefix) {
        return count("SELECT count(DISTINCT order_id) FROM receipt WHERE starts_with(order_id, '" + prefix + "')");
    }

    /** @return the distinct message ids of the receipts of orders whose ids start with {@code prefix} */
    public static long distinctReceiptIds(String prefix) {
        return count("SELECT count(DISTINCT message_id) FROM receipt WHERE starts_with(order_id, '" + prefix + "')");
    }

    /** @return the orders with a charge and no receipt, or more than one */
    public static long chargesWithoutOneReceipt() {
        return chargesWithoutOneReceipt("");
    }

    /** @return the charged orders of one run without exactly one receipt */
    public static long chargesWithoutOneReceipt(String prefix) {
        return count("SELECT count(*) FROM (SELECT DISTINCT order_id FROM charge WHERE starts_with(order_id, '" + prefix
                + "')) c WHERE (SELECT count(*) FROM receipt r WHERE r.order_id = c.order_id) <> 1");
    }

    /** @return the messages waiting in the outbox */
    public static long outboxRows() {
        return count("SELECT count(*) FROM idempotency_outbox");
    }

    public static long charges() {
        return count("SELECT count(*) FROM charge");
    }

    public static long charges(String orderId) {
        return count("SELECT count(*) FROM charge WHERE order_id = '" + orderId.replace("'", "''") + "'");
    }

    public static long distinctChargedOrders() {
        return count("SELECT count(DISTINCT order_id) FROM charge");
    }

    /** @return the orders of one run charged so far: a message an earlier test left behind cannot add to them */
    public static long distinctChargedOrders(String prefix) {
        return count("SELECT count(DISTINCT order_id) FROM charge WHERE starts_with(order_id, '" + prefix + "')");
    }

    /** @return the charges of one run's orders */
    public static long chargesOfRun(String prefix) {
        return count("SELECT count(*) FROM charge WHERE starts_with(order_id, '" + prefix + "')");
    }

    /** @return the audit entries of one order: a message an earlier test left unacknowledged cannot add to them */
    public static long auditEntries(String orderId) {
        return count("SELECT count(*) FROM payment_audit WHERE order_id = '" + orderId.replace("'", "''") + "'");
    }

    /** @return the audit entries of the orders whose ids start with {@code prefix}, repeats included */
    public static long audited(String prefix) {
        return count("SELECT count(*) FROM payment_audit WHERE order_id LIKE '" + prefix + "%'");
    }

    /** @return the orders whose ids start with {@code prefix} that have an audit entry */
    public static long distinctAudited(String prefix) {
        return count("SELECT count(DISTINCT order_id) FROM payment_audit WHERE order_id LIKE '" + prefix + "%'");
    }

    /** @return the live lease-mode claims of the audit consumer */
    public static long auditClaims() {
        return count("SELECT count(*) FROM idempotency_record WHERE state = 'CLAIMED' AND scope = 'payments-audit'");
    }

    public static long claims() {
        return count("SELECT count(*) FROM idempotency_record WHERE state = 'CLAIMED' AND scope = 'payments'");
    }

    public static long count(String sql) {
        try (Connection c = DriverManager.getConnection(url(), user(), password());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the first column of the first row, or {@code null} */
    public static String text(String sql) {
        try (Connection c = DriverManager.getConnection(url(), user(), password());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public static void execute(String sql) {
        try (Connection c = DriverManager.getConnection(url(), user(), password());
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
