package io.quarkiverse.idempotency.runtime;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

/**
 * Added at build time next to every {@code @Idempotent}: the index of the method's {@link MethodPlan} in
 * {@link IdempotentMethods}, so the interceptor finds its precomputed facts without reflection.
 */
@InterceptorBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.METHOD, ElementType.TYPE })
public @interface IdempotentMethodIndex {

    @Nonbinding
    int value();
}
