// KvType.java: what a session's KV cache stores.
package dev.ember;

/** The KV cache's type: f32 (default), f16, or q8 (int8 with an f32 scale per 32). */
public enum KvType {
  F32(0),
  F16(1),
  Q8(2);

  final int code; // EMBER_KV_*

  KvType(int code) {
    this.code = code;
  }
}
