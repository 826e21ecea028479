package io.quarkiverse.idempotency.runtime.management;

import java.time.Duration;

import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.vertx.http.runtime.security.QuarkusHttpUser;
import io.smallrye.mutiny.Uni;
import io.vertx.ext.web.RoutingContext;

/**
 * Who may call the dead letters' endpoint: a caller the management interface authenticated, with the role. The
 * interface's own permission (set by default by the build) checks it first; this is checked again here, so that an
 * application's override of that permission cannot open the endpoint.
 */
final class EndpointAccess {

    private static final Duration WITHIN = Duration.ofSeconds(30);

    private final String role;

    /** @param role the role, or {@code null} for anyone (an interface without authentication, allowed explicitly) */
    EndpointAccess(String role) {
        this.role = role;
    }

    /** @return the HTTP status that refuses the caller (401: not authenticated, 403: without the role), or 0 */
    int refusal(RoutingContext ctx) {
        if (role == null) {
            return 0;
        }
        SecurityIdentity identity = identity(ctx);
        if (identity == null || identity.isAnonymous()) {
            return 401;
        }
        return identity.hasRole(role) ? 0 : 403;
    }

    String role() {
        return role;
    }

    private static SecurityIdentity identity(RoutingContext ctx) {
        if (ctx.user() instanceof QuarkusHttpUser user) {
            return user.getSecurityIdentity();
        }
        Uni<SecurityIdentity> deferred = ctx.get(QuarkusHttpUser.DEFERRED_IDENTITY_KEY);
        return deferred == null ? null : deferred.await().atMost(WITHIN);
    }
}
