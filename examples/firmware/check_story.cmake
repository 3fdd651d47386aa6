# Runs the firmware image (through EMULATOR when set) and checks it printed llama2.c's
# golden stories260K story: the same token ids and the same text, and a clean exit.
# cmake -DFIRMWARE=... [-DEMULATOR=...] -DGOLDEN_IDS=... -DGOLDEN_STORY=... -P this
# Also for examples/mcu and tools/scripts/mcu.sh:
#   -DTAG=mcu          the image's line is "[TAG] N tokens: ..." (default: firmware)
#   -DTOKENS=N         compare only the first N ids, not the text (q8 weights follow the
#                      f32 story for a while, as tests/quant_accuracy_test.cc checks)
#   -DOUTPUT_FILE=...  check what a run already printed, instead of running FIRMWARE
if(NOT TAG)
  set(TAG firmware)
endif()
if(OUTPUT_FILE)
  file(READ ${OUTPUT_FILE} out)
else()
  execute_process(COMMAND ${EMULATOR} ${FIRMWARE}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status
                  TIMEOUT 300)
  message("${out}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${TAG} exited with ${status}: ${err}")
  endif()
endif()

file(READ ${GOLDEN_IDS} golden_ids)
string(STRIP "${golden_ids}" golden_ids)
string(REGEX MATCH "\n\\[${TAG}\\] ([0-9]+) tokens:([0-9 ]*)\n" ids_line "${out}")
if(NOT ids_line)
  message(FATAL_ERROR "no '[${TAG}] N tokens:' line in the output")
endif()
set(count ${CMAKE_MATCH_1})
string(STRIP "${CMAKE_MATCH_2}" ids)
if(TOKENS)
  # The first TOKENS ids of each, compared as lists.
  string(REPLACE " " ";" ids_list "${ids}")
  string(REPLACE " " ";" golden_list "${golden_ids}")
  list(LENGTH ids_list have)
  if(have LESS TOKENS)
    message(FATAL_ERROR "${have} token ids, fewer than the ${TOKENS} to compare")
  endif()
  list(SUBLIST ids_list 0 ${TOKENS} ids_list)
  list(SUBLIST golden_list 0 ${TOKENS} golden_list)
  if(NOT ids_list STREQUAL golden_list)
    message(FATAL_ERROR "the first ${TOKENS} token ids differ from the golden ids\n"
            " got:    ${ids_list}\n golden: ${golden_list}")
  endif()
  message("${TAG}_story: ${count} tokens, the first ${TOKENS} ids equal the golden")
  return()
endif()
if(NOT ids STREQUAL golden_ids)
  message(FATAL_ERROR "token ids differ from the golden ids\n got:    ${ids}\n"
          " golden: ${golden_ids}")
endif()

# The story is everything before the ids line; the golden text ends with a newline.
string(FIND "${out}" "${ids_line}" ids_at)
string(SUBSTRING "${out}" 0 ${ids_at} story)
file(READ ${GOLDEN_STORY} golden_story)
string(STRIP "${golden_story}" golden_story)
if(NOT story STREQUAL golden_story)
  message(FATAL_ERROR "the story differs from the golden text\n got:\n${story}\n"
          " golden:\n${golden_story}")
endif()
message("${TAG}_story: ${count} tokens, ids and text equal the golden")
