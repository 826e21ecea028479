package io.quarkiverse.idempotency.deployment.exception;

/**
 * Every rule the build checks, each with its wording and its remedy side by side. A rule's text may take details
 * (the offending type, value or channel), filled in in order: first those of the fact, then those of the remedy.
 */
public enum Rule {

    ON_CLASS("@Idempotent is not allowed on a class", "put it on each @Incoming method that must be idempotent"),
    NOT_INCOMING("@Idempotent is only allowed on @Incoming methods", "add @Incoming or remove @Idempotent"),
    INACCESSIBLE("@Idempotent method must be neither private nor static",
            "make it a non-static method with package, protected or public visibility so it can be intercepted"),
    STREAM("@Idempotent method consumes or produces a stream (Multi, Publisher or a stream builder), which has no"
            + " per-message outcome", "take one payload or Message and return void, a value, Uni or CompletionStage"),
    NO_MESSAGE("@Idempotent method takes no message", "take the payload or the Message as its first parameter"),
    EARLY_ACKNOWLEDGMENT("@Idempotent method uses @Acknowledgment(%s), which acknowledges the message before its"
            + " outcome is known", "remove @Acknowledgment or use POST_PROCESSING"),
    MESSAGE_PROCESSOR("@Idempotent method takes a Message and produces one (@Outgoing), so the outcome of the input"
            + " cannot be known before the output is acknowledged downstream",
            "take the payload and return the output payload (a duplicate then emits nothing)"),
    MESSAGE_WITHOUT_STAGE("@Idempotent method takes a Message but returns neither CompletionStage nor Uni",
            "return the CompletionStage<Void> of message.ack()/nack(), or take the payload instead"),
    TRANSACTIONAL_ASYNC("@Idempotent @Transactional method is asynchronous or takes a Message, so the key cannot be"
            + " confirmed inside its transaction",
            "take the payload and return void or a value (it runs on a worker"
                    + " thread), or drop @Transactional and open the transaction inside the method"),
    EVENT_LOOP("@Idempotent method returns %s and would run on the event loop, but it takes the Message or has"
            + " @Outgoing, whose outcome only a blocking method's delivery follows",
            "annotate it with @Blocking (or @RunOnVirtualThread), or take the payload and emit nothing"),
    EVENT_LOOP_STORE("@Idempotent method returns %s without @Blocking, so it runs on the event loop, where the store's"
            + " calls must not block; the database store makes them without blocking only through the reactive"
            + " PostgreSQL client, which the application does not have",
            "add io.quarkus:quarkus-reactive-pg-client (with quarkus.datasource.reactive.url), annotate the method with"
                    + " @Blocking (or @RunOnVirtualThread), or, for Hibernate Reactive, with @WithTransaction"),
    NON_BLOCKING("@Idempotent method is @NonBlocking, where the store's blocking calls are not allowed",
            "remove @NonBlocking"),
    TRANSACTIONAL_PROCESSOR("@Idempotent processor is @Transactional: its transaction commits before its output is"
            + " accepted downstream, so a failed send would either lose the output (the key is confirmed) or repeat"
            + " the work (it is not)",
            "add @ThroughOutbox (the output is then written in the transaction and sent after its commit), or remove"
                    + " @Transactional (the key is then confirmed once the output is acknowledged downstream)"),
    IN_TRANSACTION_INELIGIBLE("@Idempotent(mode = IN_TRANSACTION) needs a @Transactional method that starts its"
            + " transaction, takes the payload, returns synchronously and emits nothing, or a @WithTransaction one that"
            + " takes the payload and returns Uni",
            "add @Transactional (REQUIRED or REQUIRES_NEW), or use mode = LEASE"),
    REACTIVE_AND_JTA("@Idempotent method is both @WithTransaction (a Hibernate Reactive transaction) and"
            + " @Transactional (a JTA one): its key can be written in only one of them, and Quarkus refuses the mix",
            "keep @WithTransaction on a method returning Uni, or @Transactional on a synchronous one"),
    REACTIVE_BLOCKING("@Idempotent @WithTransaction method is @Blocking or @RunOnVirtualThread, but Hibernate"
            + " Reactive runs its session on the event loop only",
            "remove @Blocking: the key is written in the method's reactive transaction, without blocking"),
    REACTIVE_SHAPE("@Idempotent @WithTransaction method takes a Message, has @Outgoing, or does not return Uni, so its"
            + " key cannot be written in its reactive transaction and its outcome known when that commits",
            "take the payload and return Uni<Void>; a processor returns Uni of its output with @ThroughOutbox"),
    REACTIVE_OTHER_DATASOURCE("@Idempotent @WithTransaction method writes its key through persistence unit %s, on"
            + " datasource %s, but the idempotency keys are on datasource %s: a blocking and a reactive consumer of one"
            + " key would each find it free, in a table of its own",
            "set quarkus.idempotency.database.datasource to that datasource, or use the persistence unit of the keys'"
                    + " datasource"),
    REACTIVE_LEASE("@Idempotent(mode = LEASE) @WithTransaction method would claim its key on a lease apart from its"
            + " reactive transaction, with store calls that block its event loop",
            "remove mode = LEASE: the key is then written in the method's own transaction"),
    IN_TRANSACTION_MEMORY_STORE("@Idempotent(mode = IN_TRANSACTION) needs a store that writes keys in the method's"
            + " transaction, but quarkus.idempotency.store=memory", "use the database store, or mode = LEASE"),
    KEY_FUNCTION_NOT_INDEXED("@Idempotent key function %s is not in the index",
            "make it a class of the application (or index its jar)"),
    KEY_FUNCTION_ABSTRACT("@Idempotent key function %s is abstract", "name a concrete class implementing KeyFunction"),
    KEY_FUNCTION_NOT_A_KEY_FUNCTION("@Idempotent key function %s does not implement KeyFunction",
            "implement io.quarkiverse.idempotency.KeyFunction"),
    KEY_FUNCTION_PAYLOAD("@Idempotent key function %s accepts %s but the method's payload is %s",
            "implement KeyFunction<%s> or a supertype of it"),
    INVALID_DURATION("@Idempotent(%s = \"%s\") is not a positive duration",
            "use an ISO-8601 duration (PT30M) or a Quarkus shorthand (30m, 24h, 7d)"),
    NEGATIVE_ATTEMPTS("@Idempotent(maxAttempts = %s) is negative",
            "give the number of attempts (at least 1), or 0 for quarkus.idempotency.retry.max-attempts"),
    SHARED_SCOPE("@Idempotent methods %s and %s both consume channel '%s' under scope '%s', so the second would take"
            + " every message for a duplicate", "give each of them its own @Idempotent(scope = ...)"),
    INTERNAL_CHANNEL("@Idempotent method %s consumes channel '%s', which no connector feeds (an internal channel): its"
            + " outcomes would go back to whatever emitted the message, which cannot wait and retry",
            "put @Idempotent on the method that consumes from the broker"),
    UNSUPPORTED_CONNECTOR("@Idempotent method %s consumes channel '%s' of connector %s, whose failure handling the"
            + " extension cannot map its outcomes to (a busy message would be acked, dead-lettered or committed past"
            + " instead of retried later)",
            "use a channel of %s, or the programmatic form (Idempotency) where you"
                    + " decide what a nack does"),
    ONE_RECORD_AT_A_TIME("@Idempotent method %s consumes %s channel '%s' and %s: %s cannot requeue one record, so the"
            + " extension retries a busy, failed or unstored record in place, inside the method's invocation",
            "take one record's payload and return void, Uni<Void> or CompletionStage<Void>; send any output with an"
                    + " Emitter"),
    UNORDERED_RECORDS("@Idempotent method %s consumes Kafka channel '%s' and runs its records concurrently"
            + " (@Blocking(ordered = false) or @RunOnVirtualThread): a record retried in place would no longer hold the"
            + " records of its partition behind it, so they would be handled before it, out of order",
            "set mp.messaging.incoming.%s.throttled.ordered=partition (records of one partition then run one at a"
                    + " time, in order, partitions concurrently; key orders the records of one key), with the throttled"
                    + " commit strategy (the default), or remove ordered = false"),
    MULTIPLE_LAST_RESOURCES("@Idempotent @Transactional methods %s write their keys in their transaction, but"
            + " quarkus.transaction-manager.unsafe-multiple-last-resources=%s lets that transaction commit the keys"
            + " and a handler's work on another datasource one after the other: a crash between the two commits"
            + " confirms a key whose work was rolled back, and the message is lost",
            "remove that property (its default, fail, refuses a second datasource in one transaction, and the"
                    + " extension then keeps such a method's keys apart on a lease), or give those methods"
                    + " @Idempotent(mode = IdempotencyMode.LEASE) and no @Transactional"),
    NOT_POSTGRESQL("The idempotency database store runs PostgreSQL's SQL, but its datasource is %s=%s",
            "use a PostgreSQL datasource, set quarkus.idempotency.store=memory for tests, or supply an"
                    + " IdempotencyStore bean"),
    DATABASE_WITHOUT_DATASOURCE("quarkus.idempotency.store=database requires a PostgreSQL datasource",
            "add quarkus-jdbc-postgresql (with Hibernate ORM or without: plain JDBC is enough), or Hibernate Reactive with"
                    + " quarkus-reactive-pg-client, to the project dependencies; or set quarkus.idempotency.store=memory"),
    TRANSACTIONAL_WITHOUT_JDBC("@Idempotent method %s is @Transactional, but the application reaches its database"
            + " through the reactive PostgreSQL client only: there is no JTA datasource whose transaction its key could"
            + " join",
            "make it a @WithTransaction method returning Uni (Hibernate Reactive), drop @Transactional, or add a JDBC"
                    + " datasource (quarkus-jdbc-postgresql) and quarkus-hibernate-orm-panache"),
    OUTBOX_WITHOUT_JDBC("OutboxEmitter for channel %s writes its messages in the sender's JTA transaction, on the"
            + " datasource of the idempotency keys, and this application has no such datasource (store: %s)",
            "use the database store on a JDBC PostgreSQL datasource (quarkus-jdbc-postgresql, with Hibernate ORM or"
                    + " without), or inject a plain Emitter for messages that need no outbox"),
    OUTBOX_OUTPUT_SHAPE("@ThroughOutbox method writes its output in the transaction it runs in, so it must be an"
            + " @Incoming and @Outgoing method that takes the payload and returns the output payload in a transaction"
            + " it starts: @Transactional (REQUIRED or REQUIRES_NEW) returning the payload, or @WithTransaction"
            + " returning Uni of it",
            "make it such a method, or send from a consumer through an injected OutboxEmitter"),
    OUTBOX_OUTPUT_NOT_IDEMPOTENT("@ThroughOutbox method is not @Idempotent: the outbox writes a processor's output from"
            + " the interceptor of @Idempotent, in the transaction where its key is written",
            "add @Idempotent, or remove @ThroughOutbox and send through an injected OutboxEmitter"),
    OUTBOX_UNKNOWN_CHANNEL("The outbox of channel %s (an OutboxEmitter, or a @ThroughOutbox processor's output) sends"
            + " to a channel without a connector",
            "set mp.messaging.outgoing.<channel>.connector (smallrye-rabbitmq or smallrye-kafka), or inject a plain"
                    + " Emitter for an in-application channel"),
    STORE_WITHOUT_DURABLE_CONFIRM("IdempotencyStore %s says whether it commits asynchronously"
            + " (commitsAsynchronously) but does not answer whether a confirmed key's commit is durable"
            + " (awaitConfirmedDurably): the default answers true without looking, so a message could be acked on a"
            + " commit that a crash of the store's server then lost, with its work",
            "implement awaitConfirmedDurably(List<ScopedKey>): wait until earlier commits are durable, then answer"
                    + " whether one of the key's forms is confirmed (a store wrapping another delegates it, as it does"
                    + " commitsAsynchronously)"),
    MANAGEMENT_WITHOUT_HTTP("quarkus.idempotency.management.enabled=true, but the application has no HTTP server",
            "add the quarkus-vertx-http extension (SmallRye Health and Micrometer's Prometheus registry bring it)"),
    MANAGEMENT_WITHOUT_INTERFACE("quarkus.idempotency.management.enabled=true, but the management interface is off:"
            + " the dead letters' endpoint would be served on the application's own port",
            "set quarkus.management.enabled=true (the endpoint is then /q/idempotency/dead-letters on port 9000)"),
    MANAGEMENT_WITHOUT_AUTHENTICATION("quarkus.idempotency.management.enabled=true, but the management interface"
            + " authenticates nobody: anyone who reaches it could list and release dead-lettered keys",
            "set quarkus.management.auth.enabled=true and quarkus.management.auth.basic=true (or another mechanism)"
                    + " and give the operators the role quarkus.idempotency.management.role (%s); or, for local use"
                    + " only, quarkus.idempotency.management.allow-unauthenticated=true"),
    INVALID_OUTBOX_TABLE_NAME("quarkus.idempotency.outbox.table='%s' is not a valid table name",
            "use letters, digits and underscores, starting with a letter or underscore, optionally qualified by a"
                    + " schema (messaging.outbox), at most 59 characters each, and not a reserved SQL word"),
    INVALID_TABLE_NAME("quarkus.idempotency.database.table='%s' is not a valid table name",
            "use letters, digits and underscores, starting with a letter or underscore, optionally qualified by a"
                    + " schema (messaging.idempotency_record), and not a reserved SQL word");

    private final String fact;
    private final String remedy;

    Rule(String fact, String remedy) {
        this.fact = fact;
        this.remedy = remedy;
    }

    /**
     * @param location where the rule is broken: {@code class=..., method=...}, a channel or a configuration property
     * @param details the details the fact and then the remedy take, in order
     * @return the message: fact, location and remedy, in the form every build error of the extension has
     */
    String message(String location, Object... details) {
        int inFact = placeholders(fact);
        if (details.length != inFact + placeholders(remedy)) {
            throw new IllegalArgumentException(name() + " takes " + (inFact + placeholders(remedy)) + " details, not "
                    + details.length);
        }
        Object[] factDetails = new Object[inFact];
        Object[] remedyDetails = new Object[details.length - inFact];
        System.arraycopy(details, 0, factDetails, 0, inFact);
        System.arraycopy(details, inFact, remedyDetails, 0, remedyDetails.length);
        return String.format(fact, factDetails) + (location == null ? "" : " [" + location + "]") + "; "
                + String.format(remedy, remedyDetails);
    }

    private static int placeholders(String template) {
        int n = 0;
        for (int i = template.indexOf("%s"); i >= 0; i = template.indexOf("%s", i + 2)) {
            n++;
        }
        return n;
    }
}
