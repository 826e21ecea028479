package io.quarkiverse.idempotency.kafka.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

/**
 * Records keyed by their position name their topic's identity, not only its name: a topic deleted and created again
 * under the same name starts its offsets again, and its new records are handled, not acknowledged as duplicates of the
 * old topic's records at the same offsets (which would lose them).
 */
@QuarkusTest
class TopicRecreatedTest {

    @Test
    void theRecordsOfATopicCreatedAgainAreHandledNotTakenForTheOldOnes() throws Exception {
        try (Admin admin = Admin.create(KafkaServices.clientProperties());
                KafkaProducer<String, String> producer = producer()) {
            send(producer, "first-a");
            send(producer, "first-b");
            await().atMost(Duration.ofSeconds(30)).until(() -> logged("first-") == 2);

            Uuid before = topicId(admin);
            admin.deleteTopics(List.of(KafkaServices.EVENTS)).all().get();
            // deleting is asynchronous; the application's consumer may create the topic again itself (the broker
            // creates topics on demand): either way, a topic of that name with another identity
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                    .until(() -> {
                        try {
                            admin.createTopics(List.of(new NewTopic(KafkaServices.EVENTS, 1, (short) 1))).all().get();
                        } catch (ExecutionException e) {
                            if (!(e.getCause() instanceof TopicExistsException)) {
                                throw e;
                            }
                        }
                        return !before.equals(topicId(admin));
                    });
            // the same offsets, 0 and 1, in a topic that is another one
            send(producer, "second-a");
            send(producer, "second-b");
            await().atMost(Duration.ofSeconds(60)).until(() -> logged("second-") == 2);
            assertEquals(2, logged("first-"), "the old records were not handled again");
        }
    }

    private static Uuid topicId(Admin admin) throws InterruptedException, ExecutionException {
        return admin.describeTopics(List.of(KafkaServices.EVENTS)).allTopicNames().get().get(KafkaServices.EVENTS)
                .topicId();
    }

    private static long logged(String prefix) {
        return Charges.eventsLike(prefix + "%");
    }

    private static KafkaProducer<String, String> producer() {
        var config = KafkaServices.clientProperties();
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        return new KafkaProducer<>(config);
    }

    private static void send(KafkaProducer<String, String> producer, String event)
            throws InterruptedException, ExecutionException {
        producer.send(new ProducerRecord<>(KafkaServices.EVENTS, null, event)).get();
    }
}
