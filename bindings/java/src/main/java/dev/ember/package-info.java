// package-info.java: the package's nullability defaults (JSR-305), which Kotlin reads.
/**
 * ember for Java and Kotlin: see {@link dev.ember.Ember}.
 *
 * <p>Nothing in this package takes or returns null unless marked {@link
 * javax.annotation.Nullable}: parameters by JSR-305's {@link
 * javax.annotation.ParametersAreNonnullByDefault}, return values by {@link
 * ReturnValuesAreNonnullByDefault}. Kotlin reads both from the class files, so it sees
 * {@code String} and {@code String?} rather than {@code String!}. The annotations are
 * compile-time only: an app needs no jsr305.jar to run or to compile against ember.jar.
 */
@ParametersAreNonnullByDefault
@ReturnValuesAreNonnullByDefault
package dev.ember;

import javax.annotation.ParametersAreNonnullByDefault;
