package io.quarkiverse.idempotency.reactiveonly;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;

import io.vertx.core.Context;

/** How many times this process started a handler for each order, and whether one ran off an event loop. */
@ApplicationScoped
public class Attempts {

    private final ConcurrentHashMap<String, AtomicInteger> started = new ConcurrentHashMap<>();
    private volatile String offEventLoop;

    /** @return the number of this attempt, counting from 1 */
    int started(String orderId) {
        if (!Context.isOnEventLoopThread()) {
            offEventLoop = Thread.currentThread().getName();
        }
        return started.computeIfAbsent(orderId, id -> new AtomicInteger()).incrementAndGet();
    }

    public int of(String orderId) {
        AtomicInteger count = started.get(orderId);
        return count == null ? 0 : count.get();
    }

    /** @return the name of a thread that ran a handler and was no event loop, or {@code null} */
    public String offEventLoop() {
        return offEventLoop;
    }
}
