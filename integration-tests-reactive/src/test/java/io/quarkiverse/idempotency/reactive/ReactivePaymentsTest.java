package io.quarkiverse.idempotency.reactive;

import org.junit.jupiter.api.extension.RegisterExtension;

import io.quarkus.test.QuarkusUnitTest;

/** The reactive consumers' scenarios ({@link ReactivePaymentScenarios}) on one key table, the default layout. */
class ReactivePaymentsTest extends ReactivePaymentScenarios {

    @RegisterExtension
    static final QuarkusUnitTest APP = app(Ledger.DATABASE);
}
