package io.quarkiverse.idempotency.it;

import io.quarkus.test.junit.QuarkusIntegrationTest;

/**
 * {@link PurgeJobTest} against the packaged application.
 */
@QuarkusIntegrationTest
class PurgeJobIT extends PurgeJobTest {
}
