package io.quarkiverse.idempotency.test.deadletters;

import java.time.Instant;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.DeadLetters;
import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.test.support.TestApps;
import io.quarkiverse.idempotency.testing.DeadLetterScenario;
import io.quarkus.test.QuarkusUnitTest;

/** {@link DeadLetterScenario} on the memory store. */
class MemoryDeadLettersTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = TestApps.inMemory(new String[0], new String[0]);

    @Inject
    IdempotencyStore store;

    @Inject
    DeadLetters deadLetters;

    @Test
    void deadLettersAreListedFilteredPagedAndReleased() {
        Instant later = DeadLetterScenario.deadLetter(store);
        DeadLetterScenario.check(deadLetters, store, later);
    }
}
