// ReturnValuesAreNonnullByDefault.java: JSR-305's default for return values, which it lacks.
package dev.ember;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import javax.annotation.Nonnull;
import javax.annotation.meta.TypeQualifierDefault;

/**
 * On a package: its methods return non-null unless marked {@link javax.annotation.Nullable}
 * (a JSR-305 type qualifier default, as Spring's NonNullApi and Guava's are; Kotlin and
 * the null checkers read it). JSR-305 has {@code ParametersAreNonnullByDefault} only.
 */
@Nonnull
@TypeQualifierDefault(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PACKAGE)
@interface ReturnValuesAreNonnullByDefault {}
