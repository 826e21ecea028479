package io.quarkiverse.idempotency.deployment;

import java.util.List;
import java.util.function.BooleanSupplier;

import io.quarkiverse.idempotency.runtime.Redelivery;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQChannelCheck;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQConnectorSupport;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQConsumerChannels;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQDeadLetterReplays;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQIdempotencyFailureHandlerFactory;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQMessageIdReader;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQOutgoingIds;
import io.quarkus.arc.deployment.AdditionalBeanBuildItem;
import io.quarkus.bootstrap.classloading.QuarkusClassLoader;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.BuildSteps;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelBuildItem;

/**
 * RabbitMQ channels ({@code smallrye-rabbitmq}): a message to try again later is requeued after its delay; the
 * message id is the {@code message_id} property; outcomes reach the broker through the idempotency failure strategy,
 * which the build makes every {@code @Idempotent} channel's default. Runs only when the connector is present.
 */
@BuildSteps(onlyIf = RabbitMQProcessor.Present.class)
class RabbitMQProcessor {

    @BuildStep
    IdempotentConnectorBuildItem connector() {
        return new IdempotentConnectorBuildItem(RabbitMQChannelCheck.CONNECTOR, Redelivery.REQUEUE);
    }

    @BuildStep
    AdditionalBeanBuildItem beans() {
        return AdditionalBeanBuildItem.builder()
                .addBeanClasses(RabbitMQMessageIdReader.class, RabbitMQConnectorSupport.class, RabbitMQConsumerChannels.class,
                        RabbitMQIdempotencyFailureHandlerFactory.class, RabbitMQChannelCheck.class,
                        RabbitMQOutgoingIds.class, RabbitMQDeadLetterReplays.class)
                .setUnremovable().build();
    }

    /**
     * Every RabbitMQ channel consumed by an {@code @Idempotent} method defaults to the idempotency failure strategy;
     * application.properties still overrides it (and the startup check then says why that loses messages).
     */
    @BuildStep
    void failureStrategy(IdempotentMethodsBuildItem methods, List<ChannelBuildItem> channels,
            BuildProducer<RunTimeConfigurationDefaultBuildItem> defaults) {
        for (String channel : ConnectorChannels.of(RabbitMQChannelCheck.CONNECTOR, methods, channels)) {
            defaults.produce(new RunTimeConfigurationDefaultBuildItem("mp.messaging.incoming." + channel
                    + ".failure-strategy", RabbitMQIdempotencyFailureHandlerFactory.NAME));
        }
    }

    static final class Present implements BooleanSupplier {
        @Override
        public boolean getAsBoolean() {
            return QuarkusClassLoader.isClassPresentAtRuntime("io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnector");
        }
    }
}
