package io.quarkiverse.idempotency.test.management;

import io.quarkus.test.QuarkusUnitTest;

/** The management endpoint's test applications. */
public final class ManagementApps {

    /** The endpoint, on the management interface's test port. */
    public static final String URL = "http://localhost:9001/q/idempotency/dead-letters";

    private ManagementApps() {
    }

    /**
     * @return the application with the endpoint on a management interface with basic authentication, the user
     *         operator (op-secret) with the endpoint's role, the user viewer (view-secret) without
     */
    public static QuarkusUnitTest withOperators(QuarkusUnitTest app) {
        return app.overrideConfigKey("quarkus.idempotency.management.enabled", "true")
                .overrideConfigKey("quarkus.management.enabled", "true")
                .overrideConfigKey("quarkus.management.auth.enabled", "true")
                .overrideConfigKey("quarkus.management.auth.basic", "true")
                .overrideConfigKey("quarkus.security.users.embedded.enabled", "true")
                .overrideConfigKey("quarkus.security.users.embedded.plain-text", "true")
                .overrideConfigKey("quarkus.security.users.embedded.users.operator", "op-secret")
                .overrideConfigKey("quarkus.security.users.embedded.roles.operator", "idempotency-admin")
                .overrideConfigKey("quarkus.security.users.embedded.users.viewer", "view-secret")
                .overrideConfigKey("quarkus.security.users.embedded.roles.viewer", "reader");
    }
}
