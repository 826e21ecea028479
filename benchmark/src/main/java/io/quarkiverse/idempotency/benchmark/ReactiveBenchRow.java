package io.quarkiverse.idempotency.benchmark;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import io.quarkus.hibernate.reactive.panache.PanacheEntityBase;

/** The one row each reactive consumer inserts per message, through Hibernate Reactive. */
@Entity
@Table(name = "bench_reactive_row")
public class ReactiveBenchRow extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    public String consumer;

    public String payload;
}
