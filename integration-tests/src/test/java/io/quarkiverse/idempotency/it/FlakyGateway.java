package io.quarkiverse.idempotency.it;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;

/**
 * The real gateway, with faults the tests switch on: fail an order's first attempts, or hold an order's charge until
 * released. Counts every call.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class FlakyGateway extends PaymentGateway {

    private final Map<String, AtomicInteger> failuresLeft = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> started = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final Map<String, List<Long>> callTimes = new ConcurrentHashMap<>();

    @Override
    public void charge(String orderId, long amountCents) {
        calls.computeIfAbsent(orderId, k -> new AtomicInteger()).incrementAndGet();
        callTimes.computeIfAbsent(orderId, k -> new CopyOnWriteArrayList<>()).add(System.nanoTime());
        CountDownLatch hold = holds.get(orderId);
        if (hold != null) {
            started.get(orderId).countDown();
            try {
                hold.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        AtomicInteger left = failuresLeft.get(orderId);
        if (left != null && left.getAndDecrement() > 0) {
            throw new IllegalStateException("payment provider unavailable for " + orderId);
        }
        super.charge(orderId, amountCents);
    }

    public void failFirst(String orderId, int attempts) {
        failuresLeft.put(orderId, new AtomicInteger(attempts));
    }

    public CountDownLatch hold(String orderId) {
        started.put(orderId, new CountDownLatch(1));
        CountDownLatch latch = new CountDownLatch(1);
        holds.put(orderId, latch);
        return latch;
    }

    public boolean awaitStarted(String orderId) throws InterruptedException {
        return started.get(orderId).await(30, TimeUnit.SECONDS);
    }

    public int calls(String orderId) {
        AtomicInteger n = calls.get(orderId);
        return n == null ? 0 : n.get();
    }

    /** @return when each call for the order started, in nanoseconds of {@link System#nanoTime()} */
    public List<Long> callTimes(String orderId) {
        return callTimes.getOrDefault(orderId, List.of());
    }

    public void reset() {
        callTimes.clear();
        failuresLeft.clear();
        holds.values().forEach(CountDownLatch::countDown);
        holds.clear();
        started.clear();
        calls.clear();
    }
}
