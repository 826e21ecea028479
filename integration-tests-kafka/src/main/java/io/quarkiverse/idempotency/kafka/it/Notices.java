package io.quarkiverse.idempotency.kafka.it;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.eclipse.microprofile.reactive.messaging.Channel;

import io.quarkiverse.idempotency.OutboxEmitter;

/** Sends notices through the outbox to a channel whose records the connector writes as CloudEvents. */
@ApplicationScoped
public class Notices {

    @Inject
    @Channel("notices-out")
    OutboxEmitter<String> notices;

    /** @return the id of the notice's outbox row, which every copy of it carries */
    @Transactional
    public String send(String text) {
        return notices.send(text);
    }
}
