package io.quarkiverse.idempotency.kafka.it;

import java.time.Instant;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * One charge of a customer's card: the effect that must not happen twice. No unique constraint on the order id, on
 * purpose: a double charge would show as two rows.
 */
@Entity
@Table(name = "charge")
public class Charge extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "order_id", nullable = false)
    public String orderId;

    @Column(name = "amount_cents", nullable = false)
    public long amountCents;

    @Column(name = "charged_at", nullable = false)
    public Instant chargedAt;

    public static Charge of(String orderId, long amountCents) {
        Charge charge = new Charge();
        charge.orderId = orderId;
        charge.amountCents = amountCents;
        charge.chargedAt = Instant.now();
        return charge;
    }
}
