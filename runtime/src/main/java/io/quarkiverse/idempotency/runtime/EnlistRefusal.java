package io.quarkiverse.idempotency.runtime;

import java.sql.SQLException;

/**
 * Recognises the transaction manager refusing a second datasource into a transaction: a handler whose work is on
 * another datasource than the keys (Agroal: "Failed to enlist. Check if a connection from another datasource is
 * already enlisted to the same transaction").
 */
public final class EnlistRefusal {

    private EnlistRefusal() {
    }

    /** @return whether the failure, or one of its causes, is that refusal */
    public static boolean in(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException && t.getMessage() != null
                    && (t.getMessage().contains("Failed to enlist")
                            || t.getMessage().contains("association of connection to existing transaction"))) {
                return true;
            }
        }
        return false;
    }
}
