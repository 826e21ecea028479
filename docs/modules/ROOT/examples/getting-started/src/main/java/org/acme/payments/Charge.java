package org.acme.payments;

import jakarta.persistence.Entity;

import io.quarkus.hibernate.orm.panache.PanacheEntity;

@Entity
public class Charge extends PanacheEntity {

    public String orderId;
    public long amountCents;
}
