package io.quarkiverse.idempotency.runtime.kafka;

import java.util.Collection;

import org.apache.kafka.common.TopicPartition;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.kafka.IncomingKafkaRecord;
import io.smallrye.reactive.messaging.kafka.commit.ContextHolder;
import io.smallrye.reactive.messaging.kafka.commit.KafkaCommitHandler;
import io.vertx.mutiny.core.Context;
import io.vertx.mutiny.core.Vertx;

/**
 * The commit strategy of an {@code @Idempotent} Kafka channel: the channel's own strategy (throttled by default) does
 * the committing; this one learns, from the rebalances it is told of first, which partitions the consumer owns, and
 * stamps each record as it is received ({@link KafkaAssignments}).
 */
final class KafkaIdempotencyCommitHandler extends ContextHolder implements KafkaCommitHandler {

    private final KafkaCommitHandler delegate;
    private final KafkaAssignments assignments;

    KafkaIdempotencyCommitHandler(Vertx vertx, int timeout, KafkaCommitHandler delegate, KafkaAssignments assignments) {
        super(vertx, timeout);
        this.delegate = delegate;
        this.assignments = assignments;
    }

    @Override
    public void capture(Context context) {
        super.capture(context);
        if (delegate instanceof ContextHolder holder) {
            holder.capture(context);
        }
    }

    @Override
    public void capture(io.vertx.core.Context context) {
        super.capture(context);
        if (delegate instanceof ContextHolder holder) {
            holder.capture(context);
        }
    }

    @Override
    public <K, V> Multi<IncomingKafkaRecord<K, V>> decorateStream(Multi<IncomingKafkaRecord<K, V>> consumed) {
        return delegate.decorateStream(consumed);
    }

    @Override
    public <K, V> Uni<IncomingKafkaRecord<K, V>> received(IncomingKafkaRecord<K, V> record) {
        return assignments.stamp(record).chain(delegate::received);
    }

    @Override
    public void partitionsAssigned(Collection<TopicPartition> partitions) {
        assignments.assigned(partitions);
        delegate.partitionsAssigned(partitions);
    }

    @Override
    public void partitionsRevoked(Collection<TopicPartition> partitions) {
        assignments.revoked(partitions);
        delegate.partitionsRevoked(partitions);
    }

    @Override
    public <K, V> Uni<Void> handle(IncomingKafkaRecord<K, V> record) {
        return delegate.handle(record);
    }

    @Override
    public void terminate(boolean graceful) {
        try {
            delegate.terminate(graceful);
        } finally {
            assignments.close();
        }
    }
}
