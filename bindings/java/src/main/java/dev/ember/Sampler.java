// Sampler.java: how a session picks tokens (ember_sampler_options).
package dev.ember;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Sampling options, set fluently: {@code new Sampler().temperature(0.8f).topK(40).seed(1)}.
 * A new Sampler is greedy (temperature 0), as a session starts. ember checks the values
 * when {@link Session#setSampler} hands them over (EmberException, the old sampler kept).
 */
public final class Sampler {
  float temperature;
  int topK;
  float topP = 1f;
  float minP;
  long seed;
  float repeatPenalty = 1f;
  int repeatLastN = 64;
  float frequencyPenalty;
  float presencePenalty;
  final List<String> stop = new ArrayList<>();

  /** 0 (or below 1e-4): greedy. */
  public Sampler temperature(float value) {
    temperature = value;
    return this;
  }

  /** 0: off. */
  public Sampler topK(int k) {
    topK = k;
    return this;
  }

  /** In (0, 1]; 1: off. */
  public Sampler topP(float p) {
    topP = p;
    return this;
  }

  /** In [0, 1]; 0: off. */
  public Sampler minP(float p) {
    minP = p;
    return this;
  }

  public Sampler seed(long value) {
    seed = value;
    return this;
  }

  /** As llama.cpp's: penalty (1: off) over the context's last {@code lastN} tokens. */
  public Sampler repeatPenalty(float penalty, int lastN) {
    repeatPenalty = penalty;
    repeatLastN = lastN;
    return this;
  }

  public Sampler frequencyPenalty(float value) {
    frequencyPenalty = value;
    return this;
  }

  public Sampler presencePenalty(float value) {
    presencePenalty = value;
    return this;
  }

  /** Strings that end generation (at most 16, of at most 128 bytes). */
  public Sampler stop(String... strings) {
    stop.addAll(Arrays.asList(strings));
    return this;
  }
}
