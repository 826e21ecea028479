package io.quarkiverse.idempotency.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.inject.Inject;

import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.JavaArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkiverse.idempotency.runtime.outbox.Outbox;
import io.quarkus.test.QuarkusUnitTest;
import io.quarkus.vertx.VertxContextSupport;

/**
 * An {@code OutboxEmitter} in a {@code @WithTransaction} method that is not {@code @Idempotent}: the extension has no
 * hold on that transaction, so the send is refused with the remedy, and the method's work rolls back with it; nothing
 * is written to the outbox, nothing sent.
 */
class ReactiveOutboxRefusalTest {

    @RegisterExtension
    static final QuarkusUnitTest APP = ReactiveApps.withServices(new QuarkusUnitTest()
            .setArchiveProducer(() -> ShrinkWrap.create(JavaArchive.class)
                    .addClasses(PlainReactiveSender.class, ReactiveCharge.class, ReactiveApps.class,
                            ReactiveServices.class, Ledger.class)
                    .addAsResource("db/migration/V1__charges.sql")))
            .overrideConfigKey("quarkus.idempotency.outbox.relay-every", "off");

    @Inject
    PlainReactiveSender sender;

    @Inject
    Outbox outbox;

    @Test
    void aSendFromAWithTransactionMethodThatIsNotIdempotentIsRefused() {
        String order = "PLAIN-" + System.nanoTime();
        Throwable thrown = assertThrows(Throwable.class,
                () -> VertxContextSupport.subscribeAndAwait(() -> sender.chargeAndSend(order)));
        Throwable refusal = thrown;
        while (!(refusal instanceof IllegalStateException) && refusal.getCause() != null) {
            refusal = refusal.getCause();
        }
        assertInstanceOf(IllegalStateException.class, refusal, thrown.toString());
        assertTrue(refusal.getMessage().contains("from an @Idempotent @WithTransaction method while it runs"),
                refusal.getMessage());
        assertEquals(0, Ledger.charges(order), "the method's work rolled back with the refused send");
        assertEquals(0, outbox.backlog().waiting(), "nothing written to the outbox");
    }
}
