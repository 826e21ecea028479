package io.quarkiverse.idempotency.runtime;

import io.quarkiverse.idempotency.DeadLetterReplay;

/**
 * How one connector replays the dead letters of its channels; {@link DeadLetterReplayer} picks the connector of the
 * channel, once it checked the request.
 */
public interface ConnectorReplays {

    /** @return whether this connector consumes the channel and knows where its dead letters are */
    boolean replays(String channel);

    /**
     * Replays, on a worker thread, with a limit already checked.
     *
     * @see io.quarkiverse.idempotency.DeadLetterReplays#replay
     */
    DeadLetterReplay replay(String channel, String reason, int limit);
}
