package io.quarkiverse.idempotency.deployment;

import org.jboss.jandex.DotName;

import io.quarkiverse.idempotency.Idempotent;
import io.quarkiverse.idempotency.KeyFunction;
import io.quarkiverse.idempotency.MessageIdKey;
import io.quarkiverse.idempotency.ThroughOutbox;
import io.quarkiverse.idempotency.runtime.IdempotentMethodIndex;

final class IdempotencyDotNames {

    static final DotName IDEMPOTENT = DotName.createSimple(Idempotent.class);
    static final DotName METHOD_INDEX = DotName.createSimple(IdempotentMethodIndex.class);
    static final DotName KEY_FUNCTION = DotName.createSimple(KeyFunction.class);
    static final DotName MESSAGE_ID_KEY = DotName.createSimple(MessageIdKey.class);
    static final DotName THROUGH_OUTBOX = DotName.createSimple(ThroughOutbox.class);

    static final DotName INCOMING = DotName.createSimple("org.eclipse.microprofile.reactive.messaging.Incoming");
    static final DotName INCOMINGS = DotName.createSimple("io.smallrye.reactive.messaging.annotations.Incomings");
    static final DotName OUTGOING = DotName.createSimple("org.eclipse.microprofile.reactive.messaging.Outgoing");
    static final DotName OUTGOINGS = DotName.createSimple("io.smallrye.reactive.messaging.annotations.Outgoings");
    static final DotName ACKNOWLEDGMENT = DotName
            .createSimple("org.eclipse.microprofile.reactive.messaging.Acknowledgment");
    static final DotName MESSAGE = DotName.createSimple("org.eclipse.microprofile.reactive.messaging.Message");
    static final DotName GENERIC_PAYLOAD = DotName.createSimple("io.smallrye.reactive.messaging.GenericPayload");

    static final DotName BLOCKING = DotName.createSimple("io.smallrye.common.annotation.Blocking");
    static final DotName MESSAGING_BLOCKING = DotName
            .createSimple("io.smallrye.reactive.messaging.annotations.Blocking");
    static final DotName NON_BLOCKING = DotName.createSimple("io.smallrye.common.annotation.NonBlocking");
    static final DotName RUN_ON_VIRTUAL_THREAD = DotName
            .createSimple("io.smallrye.common.annotation.RunOnVirtualThread");
    static final DotName TRANSACTIONAL = DotName.createSimple("jakarta.transaction.Transactional");
    static final DotName WITH_TRANSACTION = DotName
            .createSimple("io.quarkus.hibernate.reactive.panache.common.WithTransaction");

    static final DotName UNI = DotName.createSimple("io.smallrye.mutiny.Uni");
    static final DotName COMPLETION_STAGE = DotName.createSimple("java.util.concurrent.CompletionStage");
    static final DotName COMPLETABLE_FUTURE = DotName.createSimple("java.util.concurrent.CompletableFuture");
    static final DotName MULTI = DotName.createSimple("io.smallrye.mutiny.Multi");
    static final DotName PUBLISHER = DotName.createSimple("org.reactivestreams.Publisher");
    static final DotName FLOW_PUBLISHER = DotName.createSimple("java.util.concurrent.Flow$Publisher");
    static final DotName PUBLISHER_BUILDER = DotName
            .createSimple("org.eclipse.microprofile.reactive.streams.operators.PublisherBuilder");
    static final DotName PROCESSOR_BUILDER = DotName
            .createSimple("org.eclipse.microprofile.reactive.streams.operators.ProcessorBuilder");

    private IdempotencyDotNames() {
    }
}
