package io.quarkiverse.idempotency.runtime.devui;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkiverse.idempotency.runtime.outbox.OutboxBacklog;
import io.smallrye.common.annotation.Blocking;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The Dev UI's outbox page: the messages waiting (how many, the oldest's age, those refused at least once, the oldest
 * rows with their failures), the messages sent at commit and by the relay, and a "send now" for those waiting for a
 * retry. Registered in dev mode; its page shows only with an {@code OutboxEmitter} in the application.
 */
public class OutboxJsonRpcService {

    private static final int ROWS = 20;

    /** Unresolvable in an application without an {@code OutboxEmitter}, whose Dev UI has no outbox page. */
    @Inject
    Instance<Outbox> outboxes;

    private Outbox outbox() {
        if (!outboxes.isResolvable()) {
            throw new IllegalStateException("This application sends nothing through an outbox (no OutboxEmitter)");
        }
        return outboxes.get();
    }

    @Blocking
    public JsonObject getOutbox() {
        Outbox outbox = outbox();
        OutboxBacklog backlog = outbox.backlog();
        return new JsonObject().put("waiting", backlog.waiting()).put("oldestSeconds", backlog.oldest().toSeconds())
                .put("failing", backlog.failing()).put("sentAtCommit", outbox.counts().sentAtOnce())
                .put("relayed", outbox.counts().relayed()).put("failures", outbox.counts().failures())
                .put("channels", new JsonArray(outbox.channelNames().stream().sorted().toList()))
                .put("rows", new JsonArray(outbox.oldest(ROWS).stream().map(JsonObject::new).toList()));
    }

    /** The page's label: how many messages wait. */
    @Blocking
    public String outboxWaiting() {
        long waiting = outbox().backlog().waiting();
        return waiting + (waiting == 1 ? " message waiting" : " messages waiting");
    }

    /** Sends the waiting messages now; answers how many the relay claimed. */
    @Blocking
    public JsonObject sendOutboxNow() {
        return new JsonObject().put("claimed", outbox().sendNow());
    }
}
