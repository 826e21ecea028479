package io.quarkiverse.idempotency.testing;

import java.time.Duration;
import java.util.function.Function;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Awaitility's defaults for every suite with the test services (registered through JUnit's extension autodetection,
 * which the build turns on): a condition is first evaluated at once, then after 10 ms, 20, 40, 80, and every 100 ms from
 * there on, instead of after 100 ms and every 100 ms. A test that waits for each of hundreds of deliveries one by one
 * otherwise waits 100 ms for each even when it settled in one (ThreadContextCapturesTest: 600 deliveries, 65 s); a
 * condition that is long in coming is still asked no more often than before (many open a database connection, or ask
 * the broker, each time: asked every 10 ms through a minute of recovery, they slowed down the recovery they waited
 * for). An {@code await()} that sets its own poll interval or delay keeps it.
 * <p>
 * Set both in the class loader that loaded this class and in the thread's context class loader, which is the
 * application's when a Quarkus test runs its methods (its own copy of Awaitility, with defaults of its own).
 */
public final class QuickPolling implements BeforeAllCallback, BeforeEachCallback {

    /** What the intervals start from: Awaitility doubles it for the first (10 ms). */
    static final Duration START = Duration.ofMillis(5);
    static final Duration LONGEST = Duration.ofMillis(100);

    /** The interval after one: twice as long, up to {@link #LONGEST}. */
    static Duration next(Duration previous) {
        Duration twice = previous.multipliedBy(2);
        return twice.compareTo(LONGEST) > 0 ? LONGEST : twice;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        apply();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        apply();
    }

    private static void apply() {
        set(QuickPolling.class.getClassLoader());
        ClassLoader thread = Thread.currentThread().getContextClassLoader();
        if (thread != null && thread != QuickPolling.class.getClassLoader()) {
            set(thread);
        }
    }

    private static void set(ClassLoader loader) {
        Class<?> awaitility;
        try {
            awaitility = Class.forName("org.awaitility.Awaitility", true, loader);
        } catch (ClassNotFoundException e) {
            return; // a class loader without Awaitility has no await() to speed up
        }
        try {
            Class<?> pollInterval = Class.forName("org.awaitility.pollinterval.PollInterval", true, loader);
            Object intervals = Class.forName("org.awaitility.pollinterval.IterativePollInterval", true, loader)
                    .getConstructor(Function.class, Duration.class)
                    .newInstance((Function<Duration, Duration>) QuickPolling::next, START);
            awaitility.getMethod("setDefaultPollDelay", Duration.class).invoke(null, Duration.ZERO);
            awaitility.getMethod("setDefaultPollInterval", pollInterval).invoke(null, intervals);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Awaitility's defaults could not be set in " + loader, e);
        }
    }
}
