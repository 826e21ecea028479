package io.quarkiverse.idempotency.runtime.management;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;

import io.quarkiverse.idempotency.DeadLetter;
import io.quarkiverse.idempotency.DeadLetterFilter;
import io.quarkiverse.idempotency.DeadLetterReplay;
import io.quarkiverse.idempotency.DeadLetterReplays;
import io.quarkiverse.idempotency.runtime.StoreDeadLetters;
import io.quarkus.arc.Arc;
import io.quarkus.arc.InstanceHandle;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code /q/idempotency/dead-letters} on the management interface, for operators: {@code GET} lists dead-lettered
 * keys (filters {@code scope}, {@code key}, {@code reason}, {@code since}; pages {@code offset}, {@code limit}),
 * {@code GET .../key?scope=..&key=..} shows one, {@code POST .../release} releases those the filters match (at least
 * one filter, or {@code all=true}), {@code POST .../replay?channel=..} moves a channel's dead letters back to its queue
 * (optionally those of one {@code reason}, up to {@code limit}). Runs on a worker thread, for the callers
 * {@link EndpointAccess} lets in.
 */
public final class DeadLetterEndpoint implements Handler<RoutingContext> {

    /** The endpoint's path under the management root. */
    public static final String PATH = "idempotency/dead-letters";

    private static final int DEFAULT_REPLAY = 1000;

    private final EndpointAccess access;
    private volatile StoreDeadLetters deadLetters;

    DeadLetterEndpoint(EndpointAccess access) {
        this.access = access;
    }

    @Override
    public void handle(RoutingContext ctx) {
        int refusal = access.refusal(ctx);
        if (refusal != 0) {
            answer(ctx, refusal, error(refusal == 401 ? "Authentication is required"
                    : "The role " + access.role() + " is required"));
            return;
        }
        if (deadLetters == null) {
            deadLetters = Arc.container().instance(StoreDeadLetters.class).get();
        }
        String path = ctx.normalizedPath();
        String tail = path.substring(path.indexOf(PATH) + PATH.length());
        try {
            if (ctx.request().method() == HttpMethod.GET && (tail.isEmpty() || tail.equals("/"))) {
                list(ctx);
            } else if (ctx.request().method() == HttpMethod.GET && tail.equals("/key")) {
                show(ctx);
            } else if (ctx.request().method() == HttpMethod.POST && tail.equals("/release")) {
                release(ctx);
            } else if (ctx.request().method() == HttpMethod.POST && tail.equals("/replay")) {
                replay(ctx);
            } else {
                answer(ctx, 404, error("No such operation: " + ctx.request().method() + " " + path + ". Use GET "
                        + PATH + ", GET " + PATH + "/key?scope=..&key=.., POST " + PATH + "/release, POST " + PATH
                        + "/replay?channel=.."));
            }
        } catch (IllegalArgumentException e) {
            answer(ctx, 400, error(e.getMessage()));
        } catch (UnsupportedOperationException e) {
            answer(ctx, 501, error(e.getMessage()));
        } catch (IllegalStateException e) {
            answer(ctx, 503, error(e.getMessage()));
        } catch (RuntimeException e) {
            answer(ctx, 503, error("The store could not answer: " + e.getMessage()));
        }
    }

    private void list(RoutingContext ctx) {
        DeadLetterFilter filter = filter(ctx);
        List<DeadLetter> page = deadLetters.list(filter);
        JsonArray items = new JsonArray();
        page.forEach(dead -> items.add(json(dead)));
        answer(ctx, 200, new JsonObject().put("deadLetters", items).put("offset", filter.offset())
                .put("limit", filter.limit()).put("more", page.size() == filter.limit()));
    }

    private void show(RoutingContext ctx) {
        String scope = required(ctx, "scope");
        String key = required(ctx, "key");
        deadLetters.find(scope, key).ifPresentOrElse(dead -> answer(ctx, 200, json(dead)),
                () -> answer(ctx, 404, error("Key '" + key + "' of scope '" + scope + "' is not dead-lettered")));
    }

    private void release(RoutingContext ctx) {
        if (!json(ctx, "release")) {
            return;
        }
        DeadLetterFilter filter = filter(ctx);
        boolean all = Boolean.parseBoolean(ctx.request().getParam("all"));
        if (!all && filter.scope() == null && filter.reason() == null && filter.since() == null) {
            throw new IllegalArgumentException("Say which dead-lettered keys to release: scope (and key), reason or"
                    + " since; or all=true for every one");
        }
        int released = deadLetters.releaseAll(filter, "the management endpoint");
        answer(ctx, 200, new JsonObject().put("released", released));
    }

    private void replay(RoutingContext ctx) {
        if (!json(ctx, "replay")) {
            return;
        }
        String channel = required(ctx, "channel");
        int limit = number(ctx, "limit", DEFAULT_REPLAY);
        InstanceHandle<DeadLetterReplays> replays = Arc.container().instance(DeadLetterReplays.class);
        if (!replays.isAvailable()) {
            throw new UnsupportedOperationException("No connector of this application replays dead letters");
        }
        String reason = ctx.request().getParam("reason");
        if ((reason == null || reason.isBlank()) && !Boolean.parseBoolean(ctx.request().getParam("all"))) {
            throw new IllegalArgumentException("Say which dead letters of channel " + channel + " to replay: reason"
                    + " (a text their reason contains); or all=true for every one");
        }
        DeadLetterReplay done = replays.get().replay(channel, reason, limit);
        answer(ctx, 200, new JsonObject().put("channel", done.channel()).put("replayed", done.replayed())
                .put("released", done.released()).put("skipped", done.skipped()).put("left", done.left()));
    }

    // A cross-site form or fetch cannot send this type without a preflight, which this endpoint never grants.
    private static boolean json(RoutingContext ctx, String operation) {
        String type = ctx.request().getHeader("Content-Type");
        if (type == null || !type.toLowerCase(Locale.ROOT).startsWith("application/json")) {
            answer(ctx, 415, error("A " + operation + " is sent with Content-Type: application/json"));
            return false;
        }
        return true;
    }

    private static DeadLetterFilter filter(RoutingContext ctx) {
        return new DeadLetterFilter(ctx.request().getParam("scope"), ctx.request().getParam("key"),
                ctx.request().getParam("reason"), since(ctx.request().getParam("since")),
                number(ctx, "offset", 0), number(ctx, "limit", DeadLetterFilter.DEFAULT_LIMIT));
    }

    private static Instant since(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("since must be an ISO-8601 instant such as 2026-12-05T10:15:30Z, not '"
                    + value + "'");
        }
    }

    private static int number(RoutingContext ctx, String name, int orElse) {
        String value = ctx.request().getParam(name);
        if (value == null || value.isBlank()) {
            return orElse;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, not '" + value + "'");
        }
    }

    private static String required(RoutingContext ctx, String name) {
        String value = ctx.request().getParam(name);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("The parameter " + name + " is required");
        }
        return value;
    }

    static JsonObject json(DeadLetter dead) {
        return new JsonObject().put("scope", dead.scope()).put("key", dead.key())
                .put("deadLetteredAt", text(dead.deadLetteredAt())).put("attempts", dead.attempts())
                .put("reason", dead.reason()).put("messageId", dead.facts().messageId())
                .put("fingerprint", dead.facts().fingerprint()).put("expiresAt", text(dead.expiresAt()));
    }

    private static String text(Instant instant) {
        return instant == null ? null : instant.toString();
    }

    private static JsonObject error(String message) {
        return new JsonObject().put("error", message);
    }

    private static void answer(RoutingContext ctx, int status, JsonObject body) {
        ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(body.encode());
    }
}
