"""The inputs template_oracle.py renders with `ember template` and the references: the
conversations (plain and with tool calls), the tool definitions, the Jinja cases of
SEMANTICS, and the clock both sides see. chat_hf_oracle.py reuses them through
template_oracle."""

NOW = 1722000000  # 2024-07-26 13:20 UTC: what strftime_now sees on both sides

CONVERSATIONS = {
    "system_and_turns": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": "Hi there. How can I help?"},
        {"role": "user", "content": "What is 2+2?"}],
    "no_system": [
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": "Hi there."},
        {"role": "user", "content": "Tell me a story."}],
    "one_user_turn": [{"role": "user", "content": "Once upon a time"}],
    "system_and_user": [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Sky colour?"}],
    "ends_with_assistant": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."}],
    "empty": [],
    "awkward_text": [
        {"role": "user", "content": "  Héllo wörld 👋\n\t"},
        {"role": "assistant",
         "content": "\n Ça va? \"quoted\" 'single' \\backslash {{ not a tag }} {% x %} "},
        {"role": "user", "content": "<|im_end|> is text here\n\n"}],
    "reasoning": [
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant",
         "content": "<think>\nLet me add.\n</think>\n\nThe answer is 4."},
        {"role": "user", "content": "Thanks"},
        {"role": "assistant", "content": "<think>\nshort\n</think>\n\nYou're welcome."}],
    "not_alternating": [
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
}

# Two functions in OpenAI's form: nested parameter schemas, enums, descriptions with
# non-ASCII text and quotes.
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Météo actuelle d'une ville: \"temp\" en °C, vent 🌬",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "object", "description": "where",
                             "properties": {"city": {"type": "string"},
                                            "country": {"type": "string",
                                                        "description": "ISO 3166 'alpha-2'"}},
                             "required": ["city"]},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 1}},
            "required": ["location"]}}},
    {"type": "function", "function": {
        "name": "search_docs",
        "description": "Search the manual \u2014 returns \"snippets\" (東京 too)",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "filters": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"field": {"type": "string", "enum": ["title", "body"]},
                                   "boost": {"type": "number"}}}},
                "exact": {"type": "boolean"}},
            "required": ["query"]}}},
]


def tool_call(call_id, name, arguments):
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


WEATHER_CALL = tool_call("call12345", "get_weather",
                         {"location": {"city": "Paris", "country": "FR"}, "unit": "celsius",
                          "days": 2})
SEARCH_CALL = tool_call("call67890", "search_docs",
                        {"query": "l'été \"chaud\"",
                         "filters": [{"field": "title", "boost": 1.5}], "exact": False})

# Conversations with tool calls (Mistral wants ids of 9 characters, Llama 3.2 one call a
# turn: what it refuses must be refused by the references too).
TOOL_CONVERSATIONS = {
    "tool_call_system": [
        {"role": "system", "content": "You are a helpful assistant with tools."},
        {"role": "user", "content": "What's the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "tool_call_id": "call12345", "name": "get_weather",
         "content": "22°C and sunny"},
        {"role": "assistant", "content": "It is 22°C and sunny in Paris."},
        {"role": "user", "content": "And tomorrow?"}],
    "tool_call_no_system": [
        {"role": "user", "content": "Weather in Paris, please."},
        {"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "tool_call_id": "call12345",
         "content": '{"temperature": 22, "unit": "celsius", "sky": "ensoleillé"}'},
        {"role": "assistant", "content": "22°C, sunny."},
        {"role": "user", "content": "Thanks!"}],
    "tool_call_content_null": [
        {"role": "user", "content": "Find \"summer\" in the manual."},
        {"role": "assistant", "content": None, "tool_calls": [SEARCH_CALL]},
        {"role": "tool", "tool_call_id": "call67890", "name": "search_docs",
         "content": '[{"title": "Été", "score": 0.9}]'}],
    "tool_call_string_arguments": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": [
            tool_call("call12345", "get_weather", '{"location": {"city": "Oslo"}}')]},
        {"role": "tool", "tool_call_id": "call12345", "content": "-3°C"},
        {"role": "user", "content": "Brr."}],
    "two_tool_calls": [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": "Weather and docs?"},
        {"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL, SEARCH_CALL]},
        {"role": "tool", "tool_call_id": "call12345", "content": "22°C"},
        {"role": "tool", "tool_call_id": "call67890", "content": "no results"},
        {"role": "assistant", "content": "22°C; the manual has nothing."},
        {"role": "user", "content": "ok"}],
}
# Plain conversations also rendered with the tools.
PLAIN_WITH_TOOLS = ("system_and_turns", "no_system", "one_user_turn", "empty")

# Jinja as the templates use it, case by case (the input is CONVERSATIONS'
# "system_and_turns"): each compared with the references like the models' templates.
SEMANTICS = [
    "{% set a = 1 %}{% for i in [1, 2] %}{{ a }}{% set a = a + 1 %}{{ a }}{% endfor %}{{ a }}",
    "{% for x in [1, 2] %}{% if x == 2 %}{% set y = 5 %}{% endif %}{{ y }}{% endfor %}",
    "{{ none }}|{{ true }}|{{ false }}|{{ [1, 'a', none, true] }}|{{ {'a': 1, 'b': 'x'} }}",
    "{{ -7 % 3 }}|{{ 7 % -3 }}|{{ 7 / 2 }}|{{ 6 / 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 2 ** 10 }}",
    "{{ 1e16 }}|{{ 0.1 + 0.2 }}|{{ 2.0 }}|{{ 1.5e-5 }}|{{ 123456.789 }}|{{ 1 / 3 }}",
    "{{ (true and 'x') }}|{{ 0 or 'y' }}|{{ '' or [] }}|{{ 'a' and 0 }}|{{ not '' }}",
    "{% set ns = namespace(a=1, b='x') %}{% set ns.a = ns.a + 1 %}{% set ns.c = 3 %}"
    "{{ ns.a }}{{ ns.b }}{{ ns.c }}",
    "{{ 'abc'[5:] }}|{{ [1, 2][-1] }}|{{ 'abcdef'[1:-1] }}|{{ 'abcdef'[::2] }}|"
    "{{ 'abcdef'[::-2] }}|{{ [1, 2, 3, 4][1::2] }}|{{ 'héllo'[1:3] }}|{{ [1,2,3][5] }}",
    "{{ messages[::-1] | map(attribute='role') | join(',') }}|{{ messages[1:] | length }}",
    "{% for m in messages if m.role != 'system' %}{{ loop.index }}/{{ loop.length }}"
    "{{ m.role[0] }}{{ ',' if not loop.last }}{% endfor %}",
    "{% for x in [] %}x{% else %}empty{% endfor %}|{% for n in [1, 2, 3, 4] %}"
    "{% if n == 2 %}{% continue %}{% endif %}{% if n == 4 %}{% break %}{% endif %}{{ n }}"
    "{% endfor %}",
    "{% for k, v in {'a': 1, 'b': [2]}.items() %}{{ k }}={{ v }};{% endfor %}",
    "{{ '  a b  ' | trim }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|"
    "{{ 'a b c'.split(' ', 1) }}|{{ 'x' * 3 }}|{{ 'hello world'.title() }}",
    "{{ 'xxaxx'.strip('x') }}|{{ '\n\nx\n'.lstrip('\n') }}|{{ 'ab'.rstrip() }}|"
    "{{ 'Hello'.upper() }}{{ 'Hello'.lower() }}{{ 'hello'.capitalize() }}",
    "{{ 'abcabc'.replace('b', 'X') }}|{{ 'abcabc'.replace('b', 'X', 1) }}|"
    "{{ 'abc'.find('c') }}|{{ 'abcabc'.count('bc') }}|{{ '-'.join(['a', 'b']) }}",
    "{{ messages[0].content.startswith('You') }}{{ messages[0].content.endswith('x') }}"
    "{{ 'ab'.startswith(('x', 'a')) }}",
    "{{ {'b': 1, 'a': [1, 'x', none, true, 1.5]} | tojson }}|{{ 'é\"\n\t<>&' | tojson }}|"
    "{{ [1, {'k': []}] | tojson(indent=2) }}|{{ messages[0] | tojson }}",
    "{{ x | default('d') }}|{{ '' | default('e', true) }}|{{ none | default('n') }}|"
    "{{ [3, 1] | first }}{{ [3, 1] | last }}{{ 'ab' | first }}|{{ 'ab' | reverse }}|"
    "{{ [1, 2] | reverse | list }}",
    "{{ messages | selectattr('role', 'equalto', 'user') | list | length }}|"
    "{{ messages | rejectattr('role', 'equalto', 'user') | map(attribute='role') | join }}|"
    "{{ [0, 1, 2, ''] | select | list }}|{{ [1, 2, 3, 4] | select('odd') | list }}|"
    "{{ [1, 2, 3] | reject('even') | list }}",
    "{{ x is defined }}{{ messages is defined }}{{ none is none }}{{ 'a' is string }}"
    "{{ 1 is number }}{{ 1.0 is float }}{{ 1 is integer }}{{ true is boolean }}"
    "{{ [1] is iterable }}{{ {} is mapping }}{{ 3 is odd }}{{ 4 is even }}"
    "{{ 9 is divisibleby 3 }}{{ 'a' is equalto 'a' }}{{ 'ab' is lower }}{{ x is undefined }}"
    "{{ messages[0] is mapping }}{{ messages is sequence }}{{ 2 is in [1, 2] }}",
    "{{ 'b' in 'abc' }}{{ 2 in [1, 2] }}{{ 'role' in messages[0] }}{{ 'x' not in messages[0] }}"
    "{{ messages[0] in messages }}",
    "{{ 1 == 1.0 }}{{ 'a' < 'b' }}{{ [1] == [1] }}{{ 2 >= 3 }}{{ 1 != 2 }}{{ none == none }}",
    "{{ 'n=' ~ 3 ~ none ~ true }}|{{ 'a' + 'b' }}|{{ [1] + [2] }}|{{ 1 + 2.5 }}|{{ -3 | abs }}",
    "{{ 'yes' if messages else 'no' }}|{{ 'a' if false }}|{{ range(3) | list }}|"
    "{{ range(1, 10, 3) | list }}|{{ range(5, 0, -2) | list }}",
    "{{ '3' | int + 1 }}|{{ 'x' | int }}|{{ '2.5' | float }}|{{ 3 | string ~ 'x' }}|"
    "{{ [1, 2] | string }}|{{ 'ab' | length }}{{ messages | count }}|{{ 'Ab' | lower }}",
    "{{ messages[0].get('role') }}|{{ messages[0].get('x', 'dflt') }}|{{ messages[0].get('x') }}|"
    "{{ messages[0].keys() | list }}|{{ messages[0].values() | list | length }}",
    "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
    "{% else %}{% set loop_messages = messages %}{% endif %}{{ loop_messages | length }}"
    "{% for m in loop_messages %}{{ loop.previtem.role if loop.previtem }}:"
    "{{ loop.nextitem.role if loop.nextitem }};{{ loop.revindex }}{{ loop.revindex0 }}"
    "{% endfor %}",
    "a\n  {%- if true %}\n    b\n  {% endif -%}\n  c {#- comment #}\n{{ 'd' }}\n",
    "{%- for m in messages -%}\n  [{{- m.role -}}]\n{% endfor %}\n  {{ 'end' }}  \n",
    "{{ \"it's\" }}|{{ 'a\\tb' }}|{{ 'x\\u00e9y' }}|{{ '\\x41' }}|{{ 'say \\\"hi\\\"' }}",
    "{{ raise_exception is defined }}{{ strftime_now('%d %b %Y %H:%M') }}{{ 'a' 'b' }}",
    "{% set x = [1, 2, 3] %}{{ x[1:] }}{{ x[:-1] | list }}{{ (x | length) - 1 }}"
    "{{ x | join(', ') }}{{ [x, x] | length }}",
    "{{ messages[0].content | trim | length }}{{ messages[-1]['content'][:4] }}"
    "{{ messages[1:3] | map(attribute='content') | join(' / ') }}",
]

# Conversations where jinja.js and Jinja2 disagree (no messages: messages[0]['role'] is
# an error in Jinja2, empty in jinja.js): compared only when Jinja2 is there to decide.
JINJA2_ONLY = {"empty"}
