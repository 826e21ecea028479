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
import org.eclipse.microprofile.reactive.messaging.Outgoing;

import io.agroal.api.AgroalDataSource;
import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.ThroughOutbox;
import io.quarkus.runtime.StartupEvent;
import io.vertx.core.json.JsonObject;

/**
 * A processor whose output goes through the outbox: each refund is an INSERT in the method's transaction, and the
 * notice it returns is written to the outbox in that same transaction, then sent to the exchange refund-notices.
 * {@code {"orderId": "J-1", "amountCents": 1299}}; a test may add {@code "failures"} (the first that many attempts fail
 * after their insert and return no notice: their rollback undoes the insert).
 */
@ApplicationScoped
public class JdbcRefunds {

    private final AgroalDataSource dataSource;
    private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

    public JdbcRefunds(AgroalDataSource dataSource) {
        this.dataSource = dataSource;
    }

    void createTable(@Observes StartupEvent event) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement statement = c.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS jdbc_refund (order_id VARCHAR(64) NOT NULL,"
                    + " amount_cents BIGINT NOT NULL)");
        }
    }

    @Incoming("jdbc-refunds")
    @Outgoing("refund-notices")
    @ThroughOutbox
    @Idempotent
    @Transactional
    public JsonObject refund(JsonObject refund) throws SQLException {
        String orderId = refund.getString("orderId");
        int attempt = attempts.computeIfAbsent(orderId, id -> new AtomicInteger()).incrementAndGet();
        try (Connection c = dataSource.getConnection();
                PreparedStatement insert = c.prepareStatement(
                        "INSERT INTO jdbc_refund (order_id, amount_cents) VALUES (?, ?)")) {
            insert.setString(1, orderId);
            insert.setLong(2, refund.getLong("amountCents", 0L));
            insert.executeUpdate();
        }
        if (attempt <= refund.getInteger("failures", 0)) {
            throw new IllegalStateException("refund refused, attempt " + attempt);
        }
        return new JsonObject().put("orderId", orderId).put("refundedCents", refund.getLong("amountCents", 0L))
                .put("attempt", attempt);
    }

    /** @return how many times the method ran for an order */
    public int attempts(String orderId) {
        AtomicInteger count = attempts.get(orderId);
        return count == null ? 0 : count.get();
    }
}
