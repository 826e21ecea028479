package io.quarkiverse.idempotency.testing;

import java.time.Duration;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Awaitility's defaults for every suite with the test services (registered through JUnit's extension autodetection,
 * which the build turns on): a condition is first evaluated at once, then every 10 ms, instead of after 100 ms and
 * every 100 ms. A test that waits for each of hundreds of deliveries one by one otherwise waits 100 ms for each even
 * when it settled in one (ThreadContextCapturesTest: 600 deliveries, 65 s). An {@code await()} that sets its own poll
 * interval or delay keeps it.
 * <p>
 * Set both in the class loader that loaded this class and in the thread's context class loader, which is the
 * application's when a Quarkus test runs its methods (its own copy of Awaitility, with defaults of its own).
 */
public final class QuickPolling implements BeforeAllCallback, BeforeEachCallback {

    static final Duration INTERVAL = Duration.ofMillis(10);

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
            awaitility.getMethod("setDefaultPollDelay", Duration.class).invoke(null, Duration.ZERO);
            awaitility.getMethod("setDefaultPollInterval", Duration.class).invoke(null, INTERVAL);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Awaitility's defaults could not be set in " + loader, e);
        }
    }
}
