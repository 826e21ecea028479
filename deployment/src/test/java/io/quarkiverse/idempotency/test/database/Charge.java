package io.quarkiverse.idempotency.test.database;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * The business row a transactional handler writes.
 */
@Entity
@Table(name = "test_charge")
public class Charge extends PanacheEntityBase {

    @Id
    @Column(name = "order_id")
    public String orderId;

    public static Charge of(String orderId) {
        Charge c = new Charge();
        c.orderId = orderId;
        return c;
    }
}
