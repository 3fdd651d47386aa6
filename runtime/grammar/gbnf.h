// GBNF, llama.cpp's grammar format, compiled to a Program (grammar_program.h).
//
// The format: rules `name ::= alternatives` (names of letters, digits and '-'), '|'
// between alternatives, sequences of string literals "...", character classes [...]
// (ranges a-z, negation [^...]), '.' (any code point), rule names and groups ( ... ),
// each optionally followed by '*', '+', '?', '{m}', '{m,}' or '{m,n}'; escapes \xHH,
// \uHHHH, \UHHHHHHHH, \t \r \n \\ \" \[ \]; '#' comments; newlines between rules,
// inside groups and after '|'. The start rule is `root` (or the one named).
//
// Compiling allocates (it runs where a grammar is set, like a model's load); the program
// it makes is plain words that a matcher runs without a heap. What the matcher cannot
// run is refused here with the line and column: undefined or twice-defined rules, left
// recursion (a rule that reaches itself before a code point), a start rule that matches
// no text, nesting deeper than kMaxNesting, repetitions past kMaxRepeat, programs past
// kMaxProgramWords.
#ifndef EMBER_RUNTIME_GRAMMAR_GBNF_H_
#define EMBER_RUNTIME_GRAMMAR_GBNF_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/grammar/grammar_program.h"  // kMaxProgramWords
#include "runtime/status.h"

namespace ember::grammar {

inline constexpr int kMaxNesting = 64;                   // groups inside groups
inline constexpr uint32_t kMaxRepeat = 10000;            // m and n of {m,n}

Status CompileGbnf(std::string_view text, std::string_view root,
                   std::vector<uint32_t>* program);

}  // namespace ember::grammar

#endif  // EMBER_RUNTIME_GRAMMAR_GBNF_H_
