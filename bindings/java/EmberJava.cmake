# Whether to build the Java binding (bindings/java): EMBER_BUILD_JAVA, ON by default when
# jni.h is found (a JDK's, or the NDK's sysroot on Android) in a native build without
# sanitizers (the JVM lacks the sanitizer runtimes), and on Android. A cross build for
# another Linux (toolchains/aarch64-linux-gnu.cmake) may ask for it: jni.h is the host
# JDK's (its jni_md.h is the same on every Linux), the .so is the target's.
if(ANDROID)
  set(ember_jni_found ON)  # jni.h is in the NDK's sysroot
  set(ember_java_default ON)
else()
  # Only the headers matter: a JNI library never links the JVM.
  find_path(EMBER_JNI_INCLUDE_DIR jni.h
            HINTS "$ENV{JAVA_HOME}/include" /usr/lib/jvm/default-java/include
            NO_CMAKE_FIND_ROOT_PATH)
  set(ember_jni_found OFF)
  if(EMBER_JNI_INCLUDE_DIR)
    set(ember_jni_found ON)
  endif()
  set(ember_java_default ${ember_jni_found})
  if(CMAKE_CROSSCOMPILING OR EMBER_SANITIZE)
    set(ember_java_default OFF)
  endif()
endif()
option(EMBER_BUILD_JAVA "Build the Java binding: libember_jni.so and ember.jar"
       ${ember_java_default})
if(EMBER_BUILD_JAVA)
  if(NOT ember_jni_found)
    message(FATAL_ERROR "EMBER_BUILD_JAVA: no jni.h (install default-jdk-headless or set "
            "EMBER_JNI_INCLUDE_DIR to a JDK's include directory)")
  endif()
  add_subdirectory(bindings/java)
endif()
