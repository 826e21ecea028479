package io.quarkiverse.idempotency.reactiveonly;

import java.time.Instant;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;

/** One charge. No unique constraint on the order id, on purpose: a double charge would show as two rows. */
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

    @Column(name = "charged_by", nullable = false)
    public String chargedBy;

    @Column(name = "charged_at", nullable = false)
    public Instant chargedAt;

    public static Charge of(String orderId, long amountCents, String chargedBy) {
        Charge charge = new Charge();
        charge.orderId = orderId;
        charge.amountCents = amountCents;
        charge.chargedBy = chargedBy;
        charge.chargedAt = Instant.now();
        return charge;
    }
}
