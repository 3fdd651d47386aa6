# Runs the firmware image (through EMULATOR when set) and checks it printed llama2.c's
# golden stories260K story: the same token ids and the same text, and a clean exit.
# cmake -DFIRMWARE=... [-DEMULATOR=...] -DGOLDEN_IDS=... -DGOLDEN_STORY=... -P this
execute_process(COMMAND ${EMULATOR} ${FIRMWARE}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status
                TIMEOUT 300)
message("${out}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "firmware exited with ${status}: ${err}")
endif()

file(READ ${GOLDEN_IDS} golden_ids)
string(STRIP "${golden_ids}" golden_ids)
string(REGEX MATCH "\n\\[firmware\\] ([0-9]+) tokens:([0-9 ]*)\n" ids_line "${out}")
if(NOT ids_line)
  message(FATAL_ERROR "no '[firmware] N tokens:' line in the output")
endif()
string(STRIP "${CMAKE_MATCH_2}" ids)
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
message("firmware_story: ${CMAKE_MATCH_1} tokens, ids and text equal the golden")
