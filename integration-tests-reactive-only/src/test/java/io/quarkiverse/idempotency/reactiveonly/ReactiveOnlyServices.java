package io.quarkiverse.idempotency.reactiveonly;

import io.quarkiverse.idempotency.testing.TestServices;
import io.quarkus.test.QuarkusUnitTest;

/**
 * The tests' PostgreSQL (database reactive_only_test, created afresh once per test JVM, reached by the applications
 * through the reactive client only) and RabbitMQ: the servers {@code TEST_POSTGRES} and {@code TEST_RABBITMQ} name, or
 * containers.
 */
final class ReactiveOnlyServices {

    static final String DATABASE = "reactive_only_test";

    private ReactiveOnlyServices() {
    }

    /** @return the application with the module's configuration and the tests' servers */
    static QuarkusUnitTest configure(QuarkusUnitTest app) {
        TestServices.Server db = TestServices.freshDatabase(DATABASE);
        app.withConfigurationResource("application.properties")
                .overrideConfigKey("quarkus.datasource.reactive.url",
                        "postgresql://" + db.host() + ":" + db.port() + "/" + DATABASE)
                .overrideConfigKey("quarkus.datasource.username", db.user())
                .overrideConfigKey("quarkus.datasource.password", db.password());
        TestServices.rabbitmqSettings().forEach(app::overrideConfigKey);
        return app;
    }
}
