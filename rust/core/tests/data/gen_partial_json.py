"""Regenerate partial_json.jsonl.gz: what `partial_json_loads` (vLLM's
tool_parsers/utils.py over partial_json_parser 0.2.1.1.post7) returns for
every prefix of a set of tool-call texts, with and without partial strings.
Run by hand with the library importable:
    PYTHONPATH=<unzipped partial_json_parser wheel> python3 gen_partial_json.py
"""

import gzip
import json
from json import JSONDecodeError, JSONDecoder
from pathlib import Path

import partial_json_parser
from partial_json_parser.core.options import Allow

TEXTS = [
    '{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}',
    '{"name": "send_email", "parameters": {"to": ["chen@example.com"], "subject": "Re: x", '
    '"body": "Hi,\\n\\"quoted\\" 🚀 and \\\\ slash."}}',
    '{"name": "calc", "arguments": {"expression": "2 * (3 + 4)", "precise": true, "n": null}}',
    '{"name": "a", "parameters": {"x": 1}}; {"name": "b", "parameters": {"y": [1, 2.5, -3e-2]}}',
    '{"name": "nested", "arguments": {"a": {"b": {"c": [{"d": "e"}, [], {}]}}, "z": false}}',
    '{"name": "unicode", "parameters": {"q": "東京の天気 \\u00e9\\u4e2d"}}',
    '  {"name" : "spaced" ,  "parameters" : { "k" : "v" , "n" : 10 } }  ',
    '{"name": "num", "parameters": {"i": 0, "f": 1.25, "e": 6.02E+23, "neg": -7, "big": 12345678901}}',
    '{"name": "empty", "parameters": {}}',
    '{"name": "str_args", "arguments": "{\\"k\\": 1}"}',
    '[{"name": "in_list", "parameters": {"a": 1}}]',
    '{"name": "x", "parameters": {"a": "b"}} trailing text',
    '{"parameters": {"first": "key"}, "name": "late_name"}',
    '{"name": "esc", "parameters": {"path": "C:\\\\dir\\\\file.txt", "tab": "a\\tb", "slash": "a\\/b"}}',
    '{"name": "multi", "parameters": {"list": ["a", "b", "c"], "mixed": [1, "two", {"three": 3}, [4]]}}',
]


def partial_json_loads(s, flags):
    try:
        return (partial_json_parser.loads(s, flags), len(s))
    except JSONDecodeError as e:
        if "Extra data" in e.msg:
            return JSONDecoder().raw_decode(s)
        raise


def main() -> None:
    out = []
    for text in TEXTS:
        for n in range(len(text) + 1):
            prefix = text[:n]
            for strings, flags in ((True, Allow.ALL), (False, Allow.ALL & ~Allow.STR)):
                try:
                    value, end = partial_json_loads(prefix, flags)
                    result = [json.dumps(value, ensure_ascii=False), end]
                except Exception:
                    result = None
                out.append({"text": prefix, "strings": strings, "result": result})
    path = Path(__file__).with_name("partial_json.jsonl.gz")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for row in out:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(len(out), "cases ->", path)


if __name__ == "__main__":
    main()
