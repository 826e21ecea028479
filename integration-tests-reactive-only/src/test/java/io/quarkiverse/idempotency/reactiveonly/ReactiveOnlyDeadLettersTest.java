package io.quarkiverse.idempotency.reactiveonly;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;

import jakarta.inject.Inject;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.runtime.database.PoolIdempotencyStore;
import io.quarkiverse.idempotency.testing.DeadLetterScenario;
import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The dead-lettered keys of an application with the reactive client only, listed, filtered and released through the
 * client's pool: the same {@link DeadLetterScenario} as over JDBC and in memory.
 */
class ReactiveOnlyDeadLettersTest {

    static final String DATABASE = "reactive_only_dead_letters";

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveOnlyServices.configure(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class).addClasses(ReactiveOnlyServices.class)))
            // a database of its own: the module's other tests count the dead letters in theirs
            .overrideConfigKey("quarkus.datasource.reactive.url", url(TestServices.freshDatabase(DATABASE)));

    private static String url(TestServices.Server db) {
        return "postgresql://" + db.host() + ":" + db.port() + "/" + DATABASE;
    }

    @Inject
    IdempotencyStore store;

    @Inject
    DeadLetters deadLetters;

    @Test
    void deadLettersAreListedFilteredPagedAndReleasedThroughThePool() {
        assertTrue(store instanceof PoolIdempotencyStore, "the store reaches its table through the pool: " + store);
        Instant later = DeadLetterScenario.deadLetter(store);
        DeadLetterScenario.check(deadLetters, store, later);
    }
}
