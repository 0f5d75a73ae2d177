"""Writes the tiny test model that scripts/model-servers.sh serves: a GGUF file (llama
architecture, byte-level BPE vocabulary, a chat template with tools) whose weights are set by
hand, not trained, so that its answers are fixed and known:

* no tools in the request: it answers ``0123456789.`` and stops;
* tools in the request, no tool result yet: it starts a tool call (``<tool_call>``), the
  server's grammar makes it a valid call of one of the tools (strings come out as ``"hi"``),
  and it stops after one call;
* tools in the request and ``in parallel`` in the prompt: two calls in one answer, each in
  its own ``<tool_call>`` block (the first of the tool that sorts first, the second of the one
  that sorts last), where the server's grammar allows several (``parallel_tool_calls``);
* a tool result in the conversation: it answers ``Done.`` and stops.

How: one layer whose attention has six of its eight heads each a detector of one marker token
anywhere in the context (``<tools>``, ``<tool_response>``, ``<tool_call>``, ``</tool_call>``,
``in parallel``, and the token that opens a second call); each writes a flag into the residual
stream. The output layer reads the flags and a one-hot code
of the current token (a bigram table for the two answers). RoPE leaves the detectors alone:
they use the last rotary pair of each head, whose angle stays ~0 with a frequency base of
1e8. The feed-forward weights are zero. The margins between the best token and the next are
wide, so sampling at usual temperatures picks what greedy does, except where two tokens tie
(which tool of several is called): the server runs with top-k 1 for that.
Usage: python make_tiny_model.py OUT.gguf
"""

import sys

import numpy as np
from gguf import GGUFWriter, TokenType

N_EMBD = 64
N_HEAD = 8
HEAD_DIM = N_EMBD // N_HEAD
N_FF = 64
N_CTX = 16384

CHAT_TEMPLATE = r"""{%- set sys = namespace(text='You are a tiny test model.') -%}
{%- if messages and messages[0]['role'] == 'system' -%}
  {%- if messages[0]['content'] is string -%}{%- set sys.text = messages[0]['content'] -%}
  {%- else -%}{%- set sys.text = messages[0]['content'] | map(attribute='text') | join('') -%}{%- endif -%}
{%- endif -%}
{{- '<|im_start|>system\n' + sys.text }}
{%- if tools -%}
  {{- '\n\nThe functions you can call:\n<tools>' }}
  {%- for tool in tools %}{{- '\n' + (tool | tojson) }}{%- endfor %}
  {{- '\n</tools>' }}
{%- endif -%}
{{- '<|im_end|>\n' }}
{%- for message in messages -%}
  {%- if message['role'] == 'system' and loop.first -%}
  {%- elif message['role'] == 'tool' -%}
    {%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' -%}{{- '<|im_start|>user' }}{%- endif -%}
    {{- '\n<tool_response>\n' + (message['content'] if message['content'] is string else message['content'] | tojson) + '\n</tool_response>' }}
    {%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' -%}{{- '<|im_end|>\n' }}{%- endif -%}
  {%- elif message['role'] == 'assistant' -%}
    {{- '<|im_start|>assistant' }}
    {%- if message['content'] -%}{{- '\n' + message['content'] }}{%- endif -%}
    {%- for tool_call in message['tool_calls'] or [] -%}
      {%- if tool_call['function'] is defined -%}{%- set tool_call = tool_call['function'] -%}{%- endif -%}
      {{- '\n<tool_call>\n{"name": "' + tool_call['name'] + '", "arguments": ' }}
      {%- if tool_call['arguments'] is string -%}{{- tool_call['arguments'] }}{%- else -%}{{- tool_call['arguments'] | tojson }}{%- endif -%}
      {{- '}\n</tool_call>' }}
    {%- endfor -%}
    {{- '<|im_end|>\n' }}
  {%- else -%}
    {{- '<|im_start|>' + message['role'] + '\n' }}
    {%- if message['content'] is string -%}{{- message['content'] }}
    {%- else -%}{{- message['content'] | map(attribute='text') | join('') }}{%- endif -%}
    {{- '<|im_end|>\n' }}
  {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' }}{%- endif -%}
"""


def byte_tokens():
    """GPT-2's byte-level alphabet: printable bytes stand for themselves, the rest are
    shifted to code points from 256 on."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, shift = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + shift)
            shift += 1
    return [table[b] for b in range(256)], table


SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
MARKERS = ["<tools>", "</tools>", "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
# matched in any text (user-defined): a prompt asking for parallel calls
PARALLEL = "in parallel"
# a newline and a brace in one token that no merge makes: only the model writes it, to open
# the second of two parallel calls (so that it can tell the second call from the first)
SECOND = "\n{"


def build():
    tokens, table = byte_tokens()
    types = [TokenType.NORMAL] * 256
    merge_tok = table[ord(" ")] * 2
    tokens.append(merge_tok)
    types.append(TokenType.NORMAL)
    for t in SPECIAL:
        tokens.append(t)
        types.append(TokenType.CONTROL)
    for t in MARKERS + [PARALLEL]:
        tokens.append(t)
        types.append(TokenType.USER_DEFINED)
    tokens.append(table[ord("\n")] + "{")
    types.append(TokenType.NORMAL)
    ids = {t: i for i, t in enumerate(tokens)}
    ids[SECOND] = ids[table[ord("\n")] + "{"]
    n_vocab = len(tokens)

    def byte(c):
        return ids[table[ord(c)]]

    # residual dims: 0 constant, 1-4 and 40-41 marker inputs, 5-8 and 42-43 flags, 10.. one-hot
    # code of chain tokens
    marker_dim = {"<tools>": 1, "<tool_response>": 2, "</tool_call>": 3, "<tool_call>": 4,
                  PARALLEL: 40, SECOND: 41}
    flag_dim = {t: d + (4 if d < 5 else 2) for t, d in marker_dim.items()}
    emb = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    emb[:, 0] = 1.0
    for t, d in marker_dim.items():
        emb[ids[t], d] = 1.0
    chain_text = "\n0123456789.Done\"hi"
    code = {}
    for i, c in enumerate(dict.fromkeys(chain_text)):
        code[byte(c)] = 10 + i
        emb[byte(c), 10 + i] = 1.0
    for t in ("<tool_call>", "</tool_call>"):
        code[ids[t]] = 10 + len(code)
        emb[ids[t], code[ids[t]]] = 1.0
    assert max(code.values()) < N_EMBD

    wq = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    wk = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    wv = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    wo = np.zeros((N_EMBD, N_EMBD), dtype=np.float32)
    for h, t in enumerate(marker_dim):
        lane = h * HEAD_DIM + HEAD_DIM - 2  # the last rotary pair: angle ~ 0 with base 1e8
        wq[lane, 0] = 2.0
        wk[lane, marker_dim[t]] = 2.0
        wv[lane, marker_dim[t]] = 1.0
        wo[flag_dim[t], lane] = 1.0
    # a present marker's value after RMSNorm: 1 / sqrt(2 / N_EMBD)
    unit = 1.0 / np.sqrt(2.0 / N_EMBD)

    out = output_layer(n_vocab, ids, byte, code, flag_dim, unit)
    return tokens, types, ids, merge_tok, emb, (wq, wk, wv, wo), out


def output_layer(n_vocab, ids, byte, code, flag_dim, unit):
    """The logits as a function of the constant dim (biases), the flags and the current
    token's code (the bigram chains)."""
    out = np.zeros((n_vocab, N_EMBD), dtype=np.float32)
    bias = out[:, 0]
    printable = {byte(c) for c in map(chr, range(0x20, 0x7F))} | {byte("\n"), byte("\t")}
    for i in range(n_vocab):
        if i not in printable:
            bias[i] = -50.0
    # ties broken towards lower bytes (so of several tools the name that sorts first is called)
    for c in range(0x20, 0x7F):
        bias[byte(chr(c))] = -0.001 * c
    # where a grammar leaves a choice: close strings, objects and arrays, no optional spaces,
    # and end a tool call after one call (a "," would start another)
    bias[byte('"')] = 12.0
    bias[byte("}")] = 8.0
    bias[byte("]")] = 8.0
    bias[byte(":")] = 4.0
    bias[byte(",")] = 6.0
    bias[byte("{")] = 4.0
    bias[byte("[")] = 4.0
    bias[byte("1")] = 4.0
    bias[ids["</tool_call>"]] = 10.0
    bias[ids["<tool_call>"]] = -10.0
    bias[ids["<|im_end|>"]] = -5.0
    T, F, G, C = (flag_dim[t] for t in ("<tools>", "<tool_response>", "</tool_call>", "<tool_call>"))
    P, S = flag_dim[PARALLEL], flag_dim[SECOND]
    out[ids["<tool_call>"], T] = 40.0 / unit
    out[ids["<tool_call>"], C] = -80.0 / unit
    # (a tool result: no more calls, however many the prompt asked for)
    out[ids["<tool_call>"], F] = -300.0 / unit
    out[ids["<tool_call>"], G] = -80.0 / unit
    # asked for parallel calls: a second call after the first (G), none after the second (S)
    out[ids["<tool_call>"], P] = 200.0 / unit
    out[ids["<tool_call>"], S] = -200.0 / unit
    out[ids["<|im_end|>"], G] = 40.0 / unit
    out[ids["<|im_end|>"], F] = -40.0 / unit

    def chain(prev, nxt, weight=20.0):
        out[nxt, code[prev]] += weight

    # the tool-call format is "<tool_call>\n{...}\n</tool_call>": the newline, then the grammar
    chain(ids["<tool_call>"], byte("\n"), 40.0)
    # never a tag right after a tag (the grammar lets one through there; P would ask for it)
    chain(ids["<tool_call>"], ids["<tool_call>"], -300.0)
    # a second call (a call closed before, G) opens with the one token "\n{" in place of "\n"
    # (both needed: the token after a tag, with a call closed before; never elsewhere)
    bias[ids[SECOND]] = -60.0
    chain(ids["<tool_call>"], ids[SECOND], 80.0)
    out[ids[SECOND], G] = 50.0 / unit
    # in the second call, ties are broken towards higher bytes: another tool than the first
    for c in range(0x20, 0x7F):
        out[byte(chr(c)), S] = 0.002 * c / unit
    digits = "0123456789."
    chain(byte("\n"), byte("0"))
    for a, b in zip(digits, digits[1:]):
        chain(byte(a), byte(b))
    chain(byte("\n"), byte("D"), 10.0)
    out[byte("D"), F] += 15.0 / unit
    for a, b in zip("Done.", "one."):
        chain(byte(a), byte(b))
    chain(byte("."), ids["<|im_end|>"], 30.0)
    # inside a JSON string (only a grammar gets it there) "hi", then the closing quote
    chain(byte('"'), byte("h"))
    chain(byte("h"), byte("i"))
    # wide margins, so that sampling at the servers' default temperature picks the same tokens
    out *= 3.0
    return out


def main(path):
    tokens, types, ids, merge_tok, emb, (wq, wk, wv, wo), out = build()
    w = GGUFWriter(path, "llama")
    w.add_name("stategraph-tiny-test")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(1)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(HEAD_DIM)
    w.add_rope_freq_base(1e8)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([f"{merge_tok[0]} {merge_tok[1]}"])
    w.add_bos_token_id(ids["<|endoftext|>"])
    w.add_eos_token_id(ids["<|im_end|>"])
    w.add_pad_token_id(ids["<|endoftext|>"])
    w.add_add_bos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)
    ones = np.ones(N_EMBD, dtype=np.float32)
    zero_ff = np.zeros((N_FF, N_EMBD), dtype=np.float32)
    w.add_tensor("token_embd.weight", emb)
    w.add_tensor("blk.0.attn_norm.weight", ones)
    w.add_tensor("blk.0.attn_q.weight", wq)
    w.add_tensor("blk.0.attn_k.weight", wk)
    w.add_tensor("blk.0.attn_v.weight", wv)
    w.add_tensor("blk.0.attn_output.weight", wo)
    w.add_tensor("blk.0.ffn_norm.weight", ones.copy())
    w.add_tensor("blk.0.ffn_gate.weight", zero_ff)
    w.add_tensor("blk.0.ffn_up.weight", zero_ff.copy())
    w.add_tensor("blk.0.ffn_down.weight", np.zeros((N_EMBD, N_FF), dtype=np.float32))
    w.add_tensor("output_norm.weight", ones.copy())
    w.add_tensor("output.weight", out)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main(sys.argv[1])
