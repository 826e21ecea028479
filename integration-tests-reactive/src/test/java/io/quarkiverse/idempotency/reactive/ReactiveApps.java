package io.quarkiverse.idempotency.reactive;

import io.quarkus.test.QuarkusUnitTest;

/** The module's configuration and the tests' servers, for the applications the tests build. */
final class ReactiveApps {

    private ReactiveApps() {
    }

    static QuarkusUnitTest withServices(QuarkusUnitTest app) {
        app.withConfigurationResource("application.properties").overrideConfigKey("quarkus.devservices.enabled",
                "false");
        ReactiveServices.environment().forEach((name, value) -> app.overrideConfigKey(
                name.toLowerCase().replace('_', '.').replace("rabbitmq.", "rabbitmq-"), value));
        return app;
    }
}
