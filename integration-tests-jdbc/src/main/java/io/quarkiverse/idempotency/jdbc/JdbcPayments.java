package io.quarkiverse.idempotency.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.json.JsonObject;

/**
 * Payments charged once by an application on plain JDBC: Agroal and the PostgreSQL driver, no Hibernate. The charge is
 * an INSERT on the datasource's connection inside the method's transaction, where the extension writes the key too:
 * one commit for both. {@code {"orderId": "J-1", "amountCents": 1299}}; a test may add {@code "failures"} (the first
 * that many attempts fail after their insert, which their rollback undoes), or {@code "fault"}: the charge fails with
 * that text as long as the table {@code jdbc_fault} lists it (an outage the test starts and ends).
 */
@ApplicationScoped
public class JdbcPayments {

    private final AgroalDataSource dataSource;
    private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

    public JdbcPayments(AgroalDataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** The application's own table: it has no Hibernate to create it. */
    void createTable(@Observes StartupEvent event) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement statement = c.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS jdbc_charge (order_id VARCHAR(64) NOT NULL,"
                    + " amount_cents BIGINT NOT NULL, charged_at TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now())");
            statement.execute("CREATE TABLE IF NOT EXISTS jdbc_fault (fault VARCHAR(200) PRIMARY KEY)");
        }
    }

    @Incoming("jdbc-payments")
    @Idempotent
    @Transactional
    public void charge(JsonObject payment) throws SQLException {
        String orderId = payment.getString("orderId");
        int attempt = attempts.computeIfAbsent(orderId, id -> new AtomicInteger()).incrementAndGet();
        try (Connection c = dataSource.getConnection();
                PreparedStatement insert = c.prepareStatement(
                        "INSERT INTO jdbc_charge (order_id, amount_cents) VALUES (?, ?)")) {
            insert.setString(1, orderId);
            insert.setLong(2, payment.getLong("amountCents", 0L));
            insert.executeUpdate();
        }
        if (attempt <= payment.getInteger("failures", 0)) {
            throw new IllegalStateException("card declined");
        }
        String fault = payment.getString("fault");
        if (fault != null && faulty(fault)) {
            throw new IllegalStateException(fault);
        }
    }

    private boolean faulty(String fault) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement select = c.prepareStatement("SELECT 1 FROM jdbc_fault WHERE fault = ?")) {
            select.setString(1, fault);
            try (var rs = select.executeQuery()) {
                return rs.next();
            }
        }
    }

    /** @return how many times the method ran for an order */
    public int attempts(String orderId) {
        AtomicInteger count = attempts.get(orderId);
        return count == null ? 0 : count.get();
    }
}
