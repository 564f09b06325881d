"""MiniMax-M2 markup on the bundled Qwen3 vocabulary, shared by the
minimax_m2 and minimax_m2_append_think tests."""

from __future__ import annotations

THINK, END_THINK = 151667, 151668
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
REQUEST = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
CALL = (
    '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Oslo'
    "</parameter>\n</invoke>\n</minimax:tool_call>"
)
