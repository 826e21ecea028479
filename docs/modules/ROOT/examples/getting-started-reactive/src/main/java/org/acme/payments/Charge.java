package org.acme.payments;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.Id;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;

@Entity
public class Charge extends PanacheEntityBase {

    @Id
    @GeneratedValue
    public Long id;

    public String orderId;

    public long amountCents;
}
