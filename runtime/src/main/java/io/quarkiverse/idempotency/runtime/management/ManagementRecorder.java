package io.quarkiverse.idempotency.runtime.management;

import io.quarkus.runtime.annotations.Recorder;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

/**
 * Makes the dead letters' endpoint, on the management interface.
 */
@Recorder
public class ManagementRecorder {

    /**
     * @param role the role a caller must have, or {@code null} when the interface authenticates nobody (allowed
     *        explicitly, for local use)
     */
    public Handler<RoutingContext> deadLetters(String role) {
        return new DeadLetterEndpoint(new EndpointAccess(role));
    }
}
