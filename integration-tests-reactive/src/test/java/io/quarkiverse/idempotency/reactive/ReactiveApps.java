package io.quarkiverse.idempotency.reactive;

import io.quarkus.test.QuarkusUnitTest;

/** The module's configuration and the tests' servers, for the applications the tests build. */
final class ReactiveApps {

    private ReactiveApps() {
    }

    static QuarkusUnitTest withServices(QuarkusUnitTest app) {
        return withServices(app, Ledger.DATABASE);
    }

    /** @param database the PostgreSQL database of the application, created afresh */
    static QuarkusUnitTest withServices(QuarkusUnitTest app, String database) {
        app.withConfigurationResource("application.properties").overrideConfigKey("quarkus.devservices.enabled",
                "false").overrideConfigKey(Ledger.DATABASE_SETTING, database);
        ReactiveServices.environment(database).forEach((name, value) -> app.overrideConfigKey(
                name.toLowerCase().replace('_', '.').replace("rabbitmq.", "rabbitmq-"), value));
        return app;
    }
}
