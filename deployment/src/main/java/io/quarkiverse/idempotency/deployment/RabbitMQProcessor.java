package io.quarkiverse.idempotency.deployment;

import java.util.List;
import java.util.function.BooleanSupplier;

import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;

import io.quarkiverse.idempotency.runtime.Redelivery;
import io.quarkiverse.idempotency.runtime.rabbitmq.RabbitMQAcks;
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
import io.quarkus.deployment.builditem.BytecodeTransformerBuildItem;
import io.quarkus.deployment.builditem.RunTimeConfigurationDefaultBuildItem;
import io.quarkus.gizmo.Gizmo;
import io.quarkus.smallrye.reactivemessaging.deployment.items.ChannelBuildItem;

/**
 * RabbitMQ channels ({@code smallrye-rabbitmq}): a message to try again later is requeued after its delay; the
 * message id is the {@code message_id} property; outcomes reach the broker through the idempotency failure strategy,
 * which the build makes every {@code @Idempotent} channel's default. Runs only when the connector is present.
 */
@BuildSteps(onlyIf = RabbitMQProcessor.Present.class)
class RabbitMQProcessor {

    /** SmallRye's manual ack, and its method {@code handle(IncomingRabbitMQMessage, Context)}. */
    private static final String RABBITMQ_ACK = "io/smallrye/reactive/messaging/rabbitmq/ack/RabbitMQAck";
    private static final String HANDLE = "(Lio/smallrye/reactive/messaging/rabbitmq/IncomingRabbitMQMessage;"
            + "Lio/vertx/mutiny/core/Context;)Ljava/util/concurrent/CompletionStage;";

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

    /**
     * SmallRye's manual ack ({@code RabbitMQAck#handle}) asks {@link RabbitMQAcks} instead, which acknowledges the
     * messages of channels consumed by {@code @Idempotent} methods on the AMQP channel that delivered them (the
     * connector acks on its client's current channel, which after a reconnect is another one) and hands the others back
     * to the connector: the method's body is replaced by {@code return RabbitMQAcks.handle(this.channel, msg, context)}.
     */
    @BuildStep
    BytecodeTransformerBuildItem acksOnTheDeliveringChannel() {
        return new BytecodeTransformerBuildItem(RABBITMQ_ACK.replace('/', '.'),
                (className, visitor) -> new ClassVisitor(Gizmo.ASM_API_VERSION, visitor) {
                    private boolean rewritten;

                    @Override
                    public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                            String[] exceptions) {
                        MethodVisitor method = super.visitMethod(access, name, descriptor, signature, exceptions);
                        if (!"handle".equals(name) || !HANDLE.equals(descriptor)) {
                            return method;
                        }
                        rewritten = true;
                        method.visitCode();
                        method.visitVarInsn(Opcodes.ALOAD, 0);
                        method.visitFieldInsn(Opcodes.GETFIELD, RABBITMQ_ACK, "channel", "Ljava/lang/String;");
                        method.visitVarInsn(Opcodes.ALOAD, 1);
                        method.visitVarInsn(Opcodes.ALOAD, 2);
                        method.visitMethodInsn(Opcodes.INVOKESTATIC, Type.getInternalName(RabbitMQAcks.class), "handle",
                                "(Ljava/lang/String;" + HANDLE.substring(1), false);
                        method.visitInsn(Opcodes.ARETURN);
                        method.visitMaxs(0, 0);
                        method.visitEnd();
                        return null; // the original body is not copied
                    }

                    @Override
                    public void visitEnd() {
                        if (!rewritten) {
                            // a SmallRye whose ack is shaped otherwise: failing the build beats acking on the wrong channel
                            throw new IllegalStateException(className + " has no method handle" + HANDLE
                                    + ": quarkus-idempotency cannot send the connector's acks to the AMQP channel that"
                                    + " delivered each message with this version of smallrye-reactive-messaging-rabbitmq");
                        }
                        super.visitEnd();
                    }
                });
    }

    static final class Present implements BooleanSupplier {
        @Override
        public boolean getAsBoolean() {
            return QuarkusClassLoader.isClassPresentAtRuntime("io.smallrye.reactive.messaging.rabbitmq.RabbitMQConnector");
        }
    }
}
