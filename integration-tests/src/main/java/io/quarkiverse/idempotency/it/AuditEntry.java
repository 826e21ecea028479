package io.quarkiverse.idempotency.it;

import java.time.Instant;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * One line of the payments audit log, written by a second consumer of the same messages (fan-out).
 */
@Entity
@Table(name = "payment_audit")
public class AuditEntry extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "order_id")
    public String orderId;

    @Column(name = "recorded_at", nullable = false)
    public Instant recordedAt;
}
