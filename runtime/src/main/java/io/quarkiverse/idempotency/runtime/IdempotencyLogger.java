package io.quarkiverse.idempotency.runtime;

import static org.jboss.logging.Logger.Level.ERROR;
import static org.jboss.logging.Logger.Level.INFO;
import static org.jboss.logging.Logger.Level.WARN;

import java.lang.invoke.MethodHandles;
import java.time.Duration;

import org.jboss.logging.BasicLogger;
import org.jboss.logging.Logger;
import org.jboss.logging.annotations.Cause;
import org.jboss.logging.annotations.LogMessage;
import org.jboss.logging.annotations.Message;
import org.jboss.logging.annotations.MessageLogger;

/**
 * Every message the extension logs at INFO or above, each with a stable code ({@code IDEMP1001}...) that operators can
 * search for and alert on: the reference lists them. Codes are never reused; a message whose meaning changes gets a new
 * one. 1000s: startup and configuration; 2000s: deliveries; 3000s: the database store; 4000s: RabbitMQ; 5000s: Kafka.
 * Each class logs under its own category, as before: {@link #of(Class)}.
 */
@MessageLogger(projectCode = "IDEMP", length = 4)
public interface IdempotencyLogger extends BasicLogger {

    /** @return the messages, logged under the category of {@code type} */
    static IdempotencyLogger of(Class<?> type) {
        return of(type.getName());
    }

    /** @return the messages, logged under {@code category} */
    static IdempotencyLogger of(String category) {
        return Logger.getMessageLogger(MethodHandles.lookup(), IdempotencyLogger.class, category);
    }

    // 1000s: startup and configuration

    @LogMessage(level = WARN)
    @Message(id = 1001, value = "quarkus.idempotency.store is 'memory' in production: every process remembers only its own"
            + " keys, so a message redelivered to another instance (or after a restart) is handled again. Add"
            + " quarkus-jdbc-postgresql (with or without Hibernate ORM) and set quarkus.idempotency.store=database")
    void memoryStoreInProduction();

    @LogMessage(level = WARN)
    @Message(id = 1002, value = "The transaction of @Idempotent %s is on another datasource than the idempotency keys:"
            + " the transaction manager refused the second one (%s). Its keys are claimed and confirmed apart from now"
            + " on, on a lease: two more commits per message, and a process that dies after the work committed but"
            + " before the key did runs it again. To keep one commit per message, do the work on the keys' datasource,"
            + " or make both datasources XA (quarkus.datasource.\"<name>\".jdbc.transactions=xa); to say that two"
            + " commits are intended, remove @Transactional and open the transaction inside the method")
    void workOnAnotherDataSource(String method, Throwable refusal);

    @LogMessage(level = WARN)
    @Message(id = 1003, value = "Could not check the idempotency store at startup (%s); deliveries will be retried until"
            + " it answers")
    void storeUncheckedAtStartup(String failure);

    @LogMessage(level = WARN)
    @Message(id = 1004, value = "quarkus.idempotency.database.asynchronous-claim-commit is on, but %s run without a"
            + " transaction: if the database server crashes while one runs, its claim may be lost, its confirm then"
            + " finds no claim, and the key is not remembered (a later duplicate runs again). Make them"
            + " @Transactional, or turn asynchronous-claim-commit off")
    void asynchronousClaimCommitWithoutTransaction(Object methods);

    @LogMessage(level = INFO)
    @Message(id = 1005, value = "Instance '%s' started again: %d claims its earlier starts left are taken over by their"
            + " next delivery, without waiting for their leases")
    void earlierStartsEnded(String instance, int claims);

    @LogMessage(level = WARN)
    @Message(id = 1006, value = "Instance '%s' could not end the leases of the claims its earlier starts left (%s): they"
            + " are taken over once their leases run out")
    void earlierStartsNotEnded(String instance, String failure);

    // 2000s: deliveries

    @LogMessage(level = INFO)
    @Message(id = 2001, value = "Took over the claim on key '%s' for %s: its lease ran out (its owner died or stalled)")
    void tookOver(Object key, String method);

    @LogMessage(level = WARN)
    @Message(id = 2002, value = "A duplicate of key '%s' of %s arrived %s after the key was confirmed, in the last tenth"
            + " of its retention (%s): a duplicate arriving after the retention runs the work again. Raise the retention"
            + " (quarkus.idempotency.retention, quarkus.idempotency.channels.\"%s\".retention) above the longest delay"
            + " with which duplicates arrive (idempotency.duplicates.age shows it)")
    void lateDuplicate(Object key, String method, Object age, Object retention, String channel);

    @LogMessage(level = WARN)
    @Message(id = 2003, value = "Message %s has key '%s' of %s, which was handled for message %s with a different"
            + " payload: acknowledged as a duplicate without running. Two different messages share the key: the key"
            + " function may be wrong, or the producer reused an id (quarkus.idempotency.payload-mismatch = dead-letter"
            + " dead-letters such messages instead)")
    void payloadMismatchAcked(String message, Object key, String method, String handledMessage);

    @LogMessage(level = ERROR)
    @Message(id = 2004, value = "%s%s")
    void payloadMismatchDeadLettered(String outcome, String suppressed);

    @LogMessage(level = ERROR)
    @Message(id = 2005, value = "Could not confirm key '%s' after %s succeeded. The work happened, so the message is"
            + " acknowledged; the claim will run out and a redelivery after that would run it again")
    void unconfirmed(@Cause Throwable cause, Object key, String method);

    @LogMessage(level = WARN)
    @Message(id = 2006, value = "The claim on key '%s' was no longer this delivery's when %s finished: taken over (the"
            + " handler outlived its lease without renewal), or lost in a database crash (with"
            + " asynchronous-claim-commit). Its work is done and the message is acknowledged, but the key is not"
            + " confirmed: another delivery may repeat the work")
    void claimLost(Object key, String method);

    @LogMessage(level = WARN)
    @Message(id = 2007, value = "Attempt %d of %d of %s for key '%s' failed: %s; retrying in %d ms%s")
    void attemptFailed(int attempt, int maxAttempts, String method, Object key, Object failure, long delayMillis,
            String suppressed);

    @LogMessage(level = ERROR)
    @Message(id = 2008, value = "Key '%s' of %s (message %s) was dead-lettered before (%s): dead-lettered again at once;"
            + " release the key to replay it%s")
    void deadLetteredBefore(Object key, String method, String message, Object before, String suppressed);

    @LogMessage(level = ERROR)
    @Message(id = 2009, value = "Attempt %d of %d of %s for key '%s' (message %s) failed; the budget is spent, so the"
            + " message is dead-lettered%s")
    void attemptsExhausted(@Cause Throwable cause, int attempt, int maxAttempts, String method, Object key,
            String message, String suppressed);

    @LogMessage(level = WARN)
    @Message(id = 2010, value = "%s, for %s; the message will be retried%s")
    void storeFailed(String failure, String method, String suppressed);

    @LogMessage(level = WARN)
    @Message(id = 2011, value = "%s%s")
    void keyMissing(String failure, String suppressed);

    @LogMessage(level = ERROR)
    @Message(id = 2012, value = "Dead-lettered message %s of channel %s at once: its payload could not be converted for"
            + " the @Idempotent method (%s); retrying cannot help%s")
    void unreadable(String message, String channel, Object failure, String suppressed);

    @LogMessage(level = WARN)
    @Message(id = 2013, value = "The claim on key '%s' was not renewed within its %d s lease (the store was unreachable,"
            + " or the renewal could not run): another delivery may have taken it over and run it too. The confirm,"
            + " fenced by the claim's token, succeeds only if none did")
    void leaseLapsed(Object key, long seconds);

    @LogMessage(level = WARN)
    @Message(id = 2014, value = "Stopped renewing the claim on key '%s': its delivery has held it longer than its"
            + " retention")
    void renewalStopped(Object key);

    @LogMessage(level = WARN)
    @Message(id = 2015, value = "Could not renew the leases of %d running handlers (%s); they will be taken over if the"
            + " store stays unreachable for longer than their lease")
    void renewalFailed(int handlers, String failure);

    @LogMessage(level = INFO)
    @Message(id = 2016, value = "Released dead-lettered key '%s': its next delivery runs, with a fresh attempt budget")
    void released(Object key);

    @LogMessage(level = INFO)
    @Message(id = 2018, value = "Released %d dead-lettered keys (%s) through %s: their next deliveries run with a fresh"
            + " attempt budget")
    void releasedMatching(int count, Object filter, String through);

    // 3000s: the database store

    @LogMessage(level = WARN)
    @Message(id = 3001, value = "Could not create or update the idempotency table at startup: %s")
    void schemaNotUpdated(String failure);

    @LogMessage(level = WARN)
    @Message(id = 3002, value = "The idempotency table '%s' is not partitioned, though partitions are asked for (by"
            + " default, or by quarkus.idempotency.database.partitioning=time): it was created unpartitioned, by"
            + " Hibernate ORM, a migration tool or an earlier version, and the purge job deletes its expired keys in"
            + " batches. To move it to partitions while consumers run, once every instance runs this version: start one"
            + " instance with quarkus.idempotency.database.partitioning=time and"
            + " quarkus.idempotency.database.schema-management=update, or call DatabaseSchema.moveToPartitions() (the"
            + " operations guide, 'Moving a running table to partitions'). To keep one table, set"
            + " quarkus.idempotency.database.partitioning=none.")
    void notPartitioned(String table);

    @LogMessage(level = INFO)
    @Message(id = 3003, value = "Moving the idempotency table '%s' to partitions: it becomes the partition %s of every"
            + " expiry before %s")
    void movingToPartitions(String table, String partition, Object bound);

    @LogMessage(level = INFO)
    @Message(id = 3004, value = "The idempotency table '%s' is partitioned")
    void partitioned(String table);

    @LogMessage(level = INFO)
    @Message(id = 3005, value = "Moving '%s' to partitions waits for its running transactions (attempt %d)")
    void partitioningWaits(String table, int attempt);

    @LogMessage(level = WARN)
    @Message(id = 3006, value = "The idempotency database store was called on event loop thread %s (%s): its JDBC"
            + " statements block that thread and every message behind it. Said once; report it, with this stack trace")
    void calledOnEventLoop(@Cause Throwable where, String thread, String call);

    @LogMessage(level = WARN)
    @Message(id = 3007, value = "The purge run at the end of a partition of the idempotency table failed; the purge"
            + " job's next run drops the partitions that ended")
    void purgeAtPartitionEndFailed(@Cause Throwable failure);

    @LogMessage(level = INFO)
    @Message(id = 3008, value = "The idempotency table '%s' is one table, not partitioned by time as by default: %s."
            + " The purge job deletes its expired keys in batches; set quarkus.idempotency.database.partitioning=none"
            + " to choose this layout")
    void unpartitionedByDefault(String table, String reason);

    @LogMessage(level = INFO)
    @Message(id = 3009, value = "Another instance is moving the idempotency table '%s' to partitions: this one goes on"
            + " with the table as it is, and follows the move when it is done")
    void movedElsewhere(String table);

    @LogMessage(level = WARN)
    @Message(id = 3010, value = "The move of the idempotency table '%s' to partitions failed, and its constraint %s"
            + " could not be dropped (%s): drop it (ALTER TABLE ... DROP CONSTRAINT), or it refuses keys expiring past"
            + " its bound")
    void moveNotUndone(String table, String constraint, String failure);

    @LogMessage(level = WARN)
    @Message(id = 3011, value = "The idempotency table '%s' has a check constraint on its state column (%s), which this"
            + " version no longer creates: PostgreSQL prepares it again for every write of a key (measured 10-15 us a"
            + " write, the order of the claim statement itself). Drop it: %s (the shipped Flyway repeatable migration,"
            + " classpath:db/idempotency/flyway, and the Liquibase changelog do;"
            + " quarkus.idempotency.database.schema-management=update does it at startup)")
    void stateCheckSlowsWrites(String table, String constraint, String statement);

    // 4000s: RabbitMQ

    @LogMessage(level = WARN)
    @Message(id = 4001, value = "Channel %s: could not republish a message to requeue it (%s); requeuing it as it is")
    void requeueRepublishFailed(String channel, String failure);

    @LogMessage(level = WARN)
    @Message(id = 4002, value = "Channel %s: could not declare the queue %s where messages wait for their retry without"
            + " holding the consumer's prefetch (%s). Messages past half the prefetch wait in it unacknowledged instead:"
            + " a burst of messages waiting for one key can slow the others down. Allow the application to declare that"
            + " queue, or declare it as a quorum queue with x-dead-letter-exchange=\"\", x-dead-letter-routing-key=%s,"
            + " x-dead-letter-strategy=at-least-once and x-overflow=reject-publish")
    void waitQueueNotDeclared(String channel, String queue, String failure, String routingKey);

    @LogMessage(level = ERROR)
    @Message(id = 4003, value = "Channel %s: could not dead-letter a message to exchange '%s' (%s); it is kept in the"
            + " queue and dead-lettered again after %d ms")
    void deadLetterNotPublished(String channel, String exchange, String failure, long delayMillis);

    @LogMessage(level = WARN)
    @Message(id = 4004, value = "%s=%s does not decide what happens to a failed message of channel %s: its @Idempotent"
            + " methods retry handler failures within their attempt budget (quarkus.idempotency.retry.*) and then"
            + " dead-letter them. The connector-wide strategy takes only the failures the extension does not map; set"
            + " %s to choose that per channel and silence this warning")
    void connectorWideStrategyBypassed(String property, String strategy, String channel, String channelProperty);

    @LogMessage(level = INFO)
    @Message(id = 4005, value = "Channel %s: replayed %d dead letters from %s (%d keys released); left %d that another"
            + " reason or channel has; %d of those it looked at still wait for a replay")
    void replayed(String channel, int replayed, String from, int released, int skipped, long left);

    // 5000s: Kafka

    @LogMessage(level = INFO)
    @Message(id = 5001, value = "Channel %s: records with neither a CloudEvents id (ce_id) nor %s are keyed by their"
            + " position (topic identity, partition, offset): a redelivery of a record is a duplicate, but the same"
            + " event published again as a new record is not. Give its @Idempotent methods a key function, or send an"
            + " id header")
    void keyedByPosition(String channel, String idHeader);

    @LogMessage(level = WARN)
    @Message(id = 5002, value = "Channel %s: could not read the identity of topic %s (%s); its records wait until it can"
            + " be read")
    void topicIdentityUnread(String channel, String topic, String failure);

    @LogMessage(level = WARN)
    @Message(id = 5003, value = "Channel %s: did not replay %d records of %s dead-lettered longer ago than the channel's"
            + " retention (%s), whose keys the store no longer knows: it cannot tell whether an earlier replay's copy"
            + " was handled. Publish one again by hand only once you know its work was not done; a channel whose dead"
            + " letters are replayed later needs a retention that long")
    void replayForgotten(String channel, int records, String topic, Duration retention);

    // 6000s: the outbox

    @LogMessage(level = WARN)
    @Message(id = 6001, value = "Outbox channel %s: message %s was not sent (attempt %d: %s); it is sent again in %d ms")
    void outboxSendFailedAt(String channel, String messageId, int attempt, String failure, long retryInMillis);

    @LogMessage(level = WARN)
    @Message(id = 6002, value = "Outbox: could not record a failed sending of message %s (%s); it is sent again when its"
            + " lease runs out")
    void outboxNotRecorded(String messageId, String failure);

    @LogMessage(level = WARN)
    @Message(id = 6003, value = "Outbox: could not delete %d sent messages (%s); they are sent again when their lease"
            + " runs out, with the same ids")
    void outboxNotDeleted(int count, String failure);

    @LogMessage(level = INFO)
    @Message(id = 6004, value = "Outbox: %d messages that earlier starts of instance %s wrote and did not send are sent"
            + " now")
    void outboxEarlierStarts(int count, String instance);

    @LogMessage(level = WARN)
    @Message(id = 6005, value = "Outbox: could not relay waiting messages (%s); the relay tries again at its next run")
    void outboxRelayFailed(String failure);

    @LogMessage(level = WARN)
    @Message(id = 6006, value = "Outbox: could not learn whether an asynchronously committed transaction is durable (%s);"
            + " its %d messages are sent by the relay, if the commit survived, when their lease runs out")
    void outboxNotDurableAt(String failure, int count);

    @LogMessage(level = WARN)
    @Message(id = 6007, value = "Outbox: the sending of row %d has waited %d s for the broker's confirm; its lease is no"
            + " longer renewed, and the relay sends it again once it runs out")
    void outboxUnconfirmed(long id, long seconds);

    @LogMessage(level = WARN)
    @Message(id = 6008, value = "Outbox: could not send the messages of a committed reactive transaction (%s); the relay"
            + " sends them when their lease runs out")
    void outboxNotHandedOver(String failure);
}
