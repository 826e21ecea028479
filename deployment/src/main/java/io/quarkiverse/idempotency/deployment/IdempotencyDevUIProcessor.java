package io.quarkiverse.idempotency.deployment;

import io.quarkiverse.idempotency.runtime.devui.IdempotencyJsonRpcService;
import io.quarkus.deployment.IsDevelopment;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.devui.spi.JsonRPCProvidersBuildItem;
import io.quarkus.devui.spi.page.CardPageBuildItem;
import io.quarkus.devui.spi.page.Page;

/**
 * The Dev UI card: the store's keys by state, the oldest live claims, the most recent keys, the purge job's last run,
 * and a purge button.
 */
class IdempotencyDevUIProcessor {

    @BuildStep(onlyIf = IsDevelopment.class)
    CardPageBuildItem card() {
        CardPageBuildItem card = new CardPageBuildItem();
        card.addPage(Page.webComponentPageBuilder()
                .title("Keys")
                .icon("font-awesome-solid:fingerprint")
                .componentLink("qwc-idempotency-keys.js")
                .dynamicLabelJsonRPCMethodName("keyCount"));
        return card;
    }

    @BuildStep(onlyIf = IsDevelopment.class)
    JsonRPCProvidersBuildItem jsonRpc() {
        return new JsonRPCProvidersBuildItem(IdempotencyJsonRpcService.class);
    }
}
