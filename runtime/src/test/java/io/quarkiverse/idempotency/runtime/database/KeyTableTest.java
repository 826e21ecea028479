package io.quarkiverse.idempotency.runtime.database;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.junit.jupiter.api.Test;

import io.vertx.core.Vertx;

/** The store's statements never run on an event loop unnoticed: the first one that does is reported. */
class KeyTableTest {

    @Test
    void aStatementOnAnEventLoopThreadIsReported() throws Exception {
        DataSource unreachable = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] { DataSource.class }, (proxy, method, args) -> {
                    throw new SQLException("no database here");
                });
        KeyTable table = new KeyTable(unreachable, null, "idempotency_record");

        // on a worker (this test's thread): not reported
        assertThrows(IllegalStateException.class, () -> table.connect(c -> null, "Could not look"));
        assertFalse(KeyTable.blockedAnEventLoop());

        Vertx vertx = Vertx.vertx();
        try {
            CompletableFuture<Void> ran = new CompletableFuture<>();
            vertx.runOnContext(ignored -> {
                try {
                    table.connect(c -> null, "Could not claim key 'k'");
                } catch (IllegalStateException expected) {
                    // the database is unreachable: only the report matters here
                }
                ran.complete(null);
            });
            ran.get(10, TimeUnit.SECONDS);
        } finally {
            vertx.close();
        }
        assertTrue(KeyTable.blockedAnEventLoop(), "a statement on an event loop thread is reported");
    }
}
