/* firmware_options.h: the one session the firmware example runs, shared by the firmware
 * and the build-time step that sizes its arena (so the two cannot disagree). */
#ifndef EMBER_EXAMPLES_FIRMWARE_FIRMWARE_OPTIONS_H_
#define EMBER_EXAMPLES_FIRMWARE_FIRMWARE_OPTIONS_H_

#include <ember/ember.h>

/* The model's full context, decode only (one token per step: batch 1), and no text
 * prompt (the story starts from BOS), so the tokenizer buffer stays small. */
static inline void FirmwareSessionOptions(ember_session_options* options) {
  ember_session_options_default(options);
  options->max_context = 0;
  options->max_batch = 1;
  options->max_prompt_bytes = 16;
}

#endif /* EMBER_EXAMPLES_FIRMWARE_FIRMWARE_OPTIONS_H_ */
