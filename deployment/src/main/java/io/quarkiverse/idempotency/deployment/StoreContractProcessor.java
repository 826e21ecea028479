package io.quarkiverse.idempotency.deployment;

import java.util.ArrayList;
import java.util.List;

import org.jboss.jandex.ClassInfo;
import org.jboss.jandex.DotName;
import org.jboss.jandex.IndexView;

import io.quarkiverse.idempotency.IdempotencyStore;
import io.quarkiverse.idempotency.deployment.exception.IdempotencyDefinitionException;
import io.quarkiverse.idempotency.deployment.exception.Rule;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem;
import io.quarkus.arc.deployment.ValidationPhaseBuildItem.ValidationErrorBuildItem;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.builditem.CombinedIndexBuildItem;

/**
 * What a store of the application's own must implement together. A store that may commit asynchronously
 * ({@link IdempotencyStore#commitsAsynchronously}) must also say whether a confirmed key's commit is durable
 * ({@link IdempotencyStore#awaitConfirmedDurably}): the interface's default cannot know, and answers true. A store
 * written before that method existed, or one wrapping the database store that forwards the first and not the second,
 * would otherwise have messages acked on commits a crash can lose. Checked in the index, at build time.
 */
public class StoreContractProcessor {

    private static final DotName STORE = DotName.createSimple(IdempotencyStore.class);
    private static final DotName OBJECT = DotName.createSimple(Object.class);
    private static final String COMMITS_ASYNCHRONOUSLY = "commitsAsynchronously";
    private static final String AWAIT_CONFIRMED_DURABLY = "awaitConfirmedDurably";

    @BuildStep
    void asynchronousStoresAnswerDurability(ValidationPhaseBuildItem validationPhase, CombinedIndexBuildItem index,
            BuildProducer<ValidationErrorBuildItem> errors) {
        List<Throwable> found = new ArrayList<>();
        for (ClassInfo store : index.getIndex().getAllKnownImplementors(STORE)) {
            // what cannot be seen (a superclass outside the index) fails nothing
            if (!store.isInterface() && !store.isAbstract()
                    && Boolean.TRUE.equals(declares(index.getIndex(), store, COMMITS_ASYNCHRONOUSLY))
                    && Boolean.FALSE.equals(declares(index.getIndex(), store, AWAIT_CONFIRMED_DURABLY))) {
                found.add(new IdempotencyDefinitionException(Rule.STORE_WITHOUT_DURABLE_CONFIRM,
                        "class=" + store.name(), store.name()));
            }
        }
        if (!found.isEmpty()) {
            errors.produce(new ValidationErrorBuildItem(found));
        }
    }

    // Whether the class or one of its superclasses declares a method of that name; null when a superclass is not in
    // the index, so that it cannot be told.
    private static Boolean declares(IndexView index, ClassInfo type, String method) {
        ClassInfo c = type;
        while (true) {
            if (c.methods().stream().anyMatch(m -> m.name().equals(method))) {
                return true;
            }
            DotName parent = c.superName();
            if (parent == null || parent.equals(OBJECT)) {
                return false;
            }
            c = index.getClassByName(parent);
            if (c == null) {
                return null;
            }
        }
    }
}
