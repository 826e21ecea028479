package io.quarkiverse.idempotency.tracing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.reactive.messaging.Incoming;

import io.quarkiverse.idempotency.Idempotent;

/** Events logged once, from Kafka: the key is the record's CloudEvents id ({@code ce_id}). */
@ApplicationScoped
public class TracedEvents {

    private final List<String> logged = new CopyOnWriteArrayList<>();

    @Incoming("traced-events")
    @Idempotent
    public void log(String event) {
        logged.add(event);
    }

    /** @return the events logged, in order */
    public List<String> logged() {
        return logged;
    }
}
