package io.quarkiverse.idempotency.deployment;

import io.quarkiverse.idempotency.runtime.devui.IdempotencyJsonRpcService;
import io.quarkiverse.idempotency.runtime.devui.OutboxJsonRpcService;
import io.quarkus.deployment.IsDevelopment;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.devui.spi.JsonRPCProvidersBuildItem;
import io.quarkus.devui.spi.page.CardPageBuildItem;
import io.quarkus.devui.spi.page.Page;

/**
 * The Dev UI card: the store's keys by state, the oldest live claims, the most recent keys, the purge job's last run,
 * and a purge button; with an {@code OutboxEmitter}, the outbox's waiting messages and a "send now".
 */
class IdempotencyDevUIProcessor {

    @BuildStep(onlyIf = IsDevelopment.class)
    CardPageBuildItem card(OutboxChannelsBuildItem outbox, SelectedStoreBuildItem store) {
        CardPageBuildItem card = new CardPageBuildItem();
        card.addPage(Page.webComponentPageBuilder()
                .title("Keys")
                .icon("font-awesome-solid:fingerprint")
                .componentLink("qwc-idempotency-keys.js")
                .dynamicLabelJsonRPCMethodName("keyCount"));
        if (outbox.any() && store.jdbc()) {
            card.addPage(Page.webComponentPageBuilder()
                    .title("Outbox")
                    .icon("font-awesome-solid:paper-plane")
                    .componentLink("qwc-idempotency-outbox.js")
                    .dynamicLabelJsonRPCMethodName("outboxWaiting"));
        }
        return card;
    }

    /** Both services, whether or not there is an outbox: what decides the providers must not need the index. */
    @BuildStep(onlyIf = IsDevelopment.class)
    void jsonRpc(BuildProducer<JsonRPCProvidersBuildItem> providers) {
        providers.produce(new JsonRPCProvidersBuildItem(IdempotencyJsonRpcService.class));
        providers.produce(new JsonRPCProvidersBuildItem(OutboxJsonRpcService.class));
    }
}
