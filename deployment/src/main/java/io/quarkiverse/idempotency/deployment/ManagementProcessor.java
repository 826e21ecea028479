package io.quarkiverse.idempotency.deployment;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkiverse.idempotency.runtime.IdempotencyBuildTimeConfig;
import io.quarkiverse.idempotency.runtime.StoreDeadLetters;
import io.quarkiverse.idempotency.runtime.management.DeadLetterEndpoint;
import io.quarkiverse.idempotency.runtime.management.ManagementRecorder;
import io.quarkus.arc.deployment.UnremovableBeanBuildItem;
import io.quarkus.deployment.Capabilities;
import io.quarkus.deployment.Capability;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.vertx.http.deployment.spi.RouteBuildItem;

/**
 * The dead letters' endpoint ({@code quarkus.idempotency.management.enabled}): refused unless it is served on the
 * management interface with authentication (or unauthenticated use is allowed explicitly); its paths given a role
 * policy by default; its routes registered.
 */
class ManagementProcessor {

    static final String ENABLED = "quarkus.idempotency.management.enabled";
    static final String POLICY = "idempotency-management";

    @BuildStep
    void check(IdempotencyBuildTimeConfig config, Capabilities capabilities,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults,
            BuildProducer<UnremovableBeanBuildItem> unremovable) {
        IdempotencyBuildTimeConfig.Management endpoint = config.management();
        if (!endpoint.enabled()) {
            return;
        }
        unremovable.produce(UnremovableBeanBuildItem.beanTypes(StoreDeadLetters.class));
        if (!capabilities.isPresent(Capability.VERTX_HTTP)) {
            throw new IdempotencyDefinitionException(Rule.MANAGEMENT_WITHOUT_HTTP, ENABLED);
        }
        Config all = ConfigProvider.getConfig();
        if (!all.getOptionalValue("quarkus.management.enabled", Boolean.class).orElse(false)) {
            throw new IdempotencyDefinitionException(Rule.MANAGEMENT_WITHOUT_INTERFACE, ENABLED);
        }
        boolean authenticated = authenticated(all);
        if (!authenticated && !endpoint.allowUnauthenticated()) {
            throw new IdempotencyDefinitionException(Rule.MANAGEMENT_WITHOUT_AUTHENTICATION, ENABLED,
                    endpoint.role());
        }
        if (authenticated) {
            // the interface's own check of the role, before the endpoint's (an application may override both keys)
            String root = all.getOptionalValue("quarkus.management.root-path", String.class).orElse("/q");
            root = (root.startsWith("/") ? "" : "/") + root; // a relative root is under the interface's /
            String paths = (root.endsWith("/") ? root : root + "/") + DeadLetterEndpoint.PATH;
            defaults.produce(new RunTimeConfigurationDefaultBuildItem(
                    "quarkus.management.auth.permission." + POLICY + ".paths", paths + "," + paths + "/*"));
            defaults.produce(new RunTimeConfigurationDefaultBuildItem(
                    "quarkus.management.auth.permission." + POLICY + ".policy", POLICY));
            defaults.produce(new RunTimeConfigurationDefaultBuildItem(
                    "quarkus.management.auth.policy." + POLICY + ".roles-allowed", endpoint.role()));
        }
    }

    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    void routes(IdempotencyBuildTimeConfig config, Capabilities capabilities, ManagementRecorder recorder,
            BuildProducer<RouteBuildItem> routes) {
        if (!config.management().enabled() || !capabilities.isPresent(Capability.VERTX_HTTP)) {
            return;
        }
        boolean authenticated = authenticated(ConfigProvider.getConfig());
        var handler = recorder.deadLetters(authenticated ? config.management().role() : null);
        for (String path : new String[] { DeadLetterEndpoint.PATH, DeadLetterEndpoint.PATH + "/*" }) {
            routes.produce(RouteBuildItem.newManagementRoute(path).withRequestHandler(handler).asBlockingRoute()
                    .build());
        }
    }

    // quarkus.management.auth.enabled defaults to quarkus.management.auth.basic (its mapping's default, which the
    // configuration resolves): basic=true alone enables it (ManagementWithBasicAuthenticationOnlyTest)
    private static boolean authenticated(Config all) {
        return all.getOptionalValue("quarkus.management.auth.enabled", Boolean.class).orElse(false);
    }
}
