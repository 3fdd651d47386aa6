/* model_blob.S: the converted model, embedded read-only in .rodata at build time (the
 * path comes from CMake as EMBER_MODEL_FILE). 64-byte aligned, as Model::FromMemory and
 * the tensors' 64-byte offsets inside the file expect. */
  .section .rodata.ember_model, "a"
  .balign 64
  .global ember_model_data
ember_model_data:
  .incbin EMBER_MODEL_FILE
  .global ember_model_end
ember_model_end:
  .section .note.GNU-stack, "", %progbits
