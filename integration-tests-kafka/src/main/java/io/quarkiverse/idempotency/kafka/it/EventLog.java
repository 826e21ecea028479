package io.quarkiverse.idempotency.kafka.it;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;

/**
 * Logs each event of the Kafka topic {@code events} once, keyed by the broker's message id: events carry no id of
 * their own, so each record is keyed by its position (its topic's identity, partition and offset), which a redelivery
 * of the record shares and a topic created again under the same name does not.
 */
@ApplicationScoped
public class EventLog {

    @Inject
    EntityManager entityManager;

    @Incoming("events")
    @Idempotent
    @Transactional
    void log(String event) {
        entityManager.createNativeQuery("INSERT INTO event_log (payload) VALUES (?1)").setParameter(1, event)
                .executeUpdate();
    }
}
