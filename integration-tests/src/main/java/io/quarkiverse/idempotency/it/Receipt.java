package io.quarkiverse.idempotency.it;

import java.time.Instant;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/** A receipt as the downstream receipts consumer recorded it: one row per receipt handled. */
@Entity
@Table(name = "receipt")
public class Receipt extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "message_id", nullable = false)
    public String messageId;

    @Column(name = "order_id", nullable = false)
    public String orderId;

    /** The routing key it was published with: the order's id, the key the payments consumer gave it. */
    @Column(name = "message_key")
    public String messageKey;

    @Column(name = "amount_cents", nullable = false)
    public long amountCents;

    @Column(name = "recorded_at", nullable = false)
    public Instant recordedAt;
}
