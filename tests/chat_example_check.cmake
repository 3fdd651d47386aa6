# Runs examples/chat/chat.c's program with three user turns on stdin and checks that it
# answered each (a numbered reply line), that the second turn reused the cache, and that
# it exited 0. usage: cmake -DEXAMPLE=... -DMODEL=... [-DEMULATOR=...] -P
# chat_example_check.cmake
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/chat_turns.txt
     "Hello there\nTell me about the dog\nAnd then?\n")
# EMULATOR: a cross build's emulator and its arguments, comma-separated (empty natively).
string(REPLACE "," ";" emulator "${EMULATOR}")
execute_process(COMMAND ${emulator} ${EXAMPLE} ${MODEL} "You tell short stories."
                INPUT_FILE ${CMAKE_CURRENT_BINARY_DIR}/chat_turns.txt
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("stdout:\n${out}\nstderr:\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "chat example exited ${rc}")
endif()
foreach(turn 1 2 3)
  if(NOT out MATCHES "\\[${turn}\\] [^\n]")
    message(FATAL_ERROR "no reply to turn ${turn}")
  endif()
endforeach()
if(NOT err MATCHES "turn 2: ([0-9]+) prompt tokens, ([1-9][0-9]*) cached")
  message(FATAL_ERROR "turn 2 reused no cached tokens")
endif()
