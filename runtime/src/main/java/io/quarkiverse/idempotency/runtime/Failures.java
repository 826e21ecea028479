package io.quarkiverse.idempotency.runtime;

import io.quarkiverse.idempotency.IdempotencyException;

/** What a connector's failure handler finds in the reason a message was nacked with. */
public final class Failures {

    private Failures() {
    }

    /** @return the extension's outcome among {@code reason} and its causes, or {@code null} when there is none */
    public static IdempotencyException outcomeOf(Throwable reason) {
        for (Throwable t = reason; t != null; t = t.getCause()) {
            if (t instanceof IdempotencyException e) {
                return e;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return null;
    }
}
