package io.quarkiverse.idempotency.it;

import io.quarkus.test.junit.QuarkusIntegrationTest;

/**
 * {@link DemoTest} against the packaged application: the jar in the default build, the native binary with
 * {@code -Dnative}.
 */
@QuarkusIntegrationTest
class DemoIT extends DemoTest {
}
