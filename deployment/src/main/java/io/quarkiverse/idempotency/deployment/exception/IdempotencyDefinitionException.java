package io.quarkiverse.idempotency.deployment.exception;

import jakarta.enterprise.inject.spi.DeploymentException;

import org.jboss.jandex.MethodInfo;

/**
 * A misuse of the idempotency extension found at build time: which {@link Rule} it breaks, and where. The message
 * states what is wrong, where, and the remedy.
 */
public final class IdempotencyDefinitionException extends DeploymentException {

    private final Rule rule;
    private final transient MethodInfo method;
    private final String location;

    /**
     * A rule broken by a method.
     *
     * @param details what the rule's wording takes (see {@link Rule})
     */
    public IdempotencyDefinitionException(Rule rule, MethodInfo method, Object... details) {
        this(rule, method, "class=" + method.declaringClass().name() + ", method=" + method.name(), details);
    }

    /**
     * A rule broken by a setting, a class or a channel.
     *
     * @param location the property, class or channel
     * @param details what the rule's wording takes (see {@link Rule})
     */
    public IdempotencyDefinitionException(Rule rule, String location, Object... details) {
        this(rule, null, location, details);
    }

    private IdempotencyDefinitionException(Rule rule, MethodInfo method, String location, Object... details) {
        super(rule.message(location, details));
        this.rule = rule;
        this.method = method;
        this.location = location;
    }

    /** @return the rule broken */
    public Rule rule() {
        return rule;
    }

    /** @return the method that breaks it, or {@code null} when a setting, class or channel does */
    public MethodInfo method() {
        return method;
    }

    /** @return where the problem is ({@code class=..., method=...}, a channel or a configuration property) */
    public String location() {
        return location;
    }
}
