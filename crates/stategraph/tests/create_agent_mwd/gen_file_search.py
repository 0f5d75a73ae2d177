"""Writes file_search.json for crates/stategraph/tests/create_agent_mwd.rs: langchain 1.5.0's
FilesystemFileSearchMiddleware (pinned venv) on a temp directory this script lays out
(the same `TREE` the Rust test lays out), its tools' names/descriptions/parameters, the
answers to `CALLS`, and the tool messages a create_agent run with a scripted model stores.

    python gen_file_search.py > file_search.json
"""
import json
import os
import sys
import tempfile
import warnings

from langchain.agents import create_agent
from langchain.agents.middleware import FilesystemFileSearchMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

warnings.filterwarnings("ignore")

# path, content (None: a directory), mtime (seconds). Symlinks come after.
TREE = [
    ["README.md", "# Demo\nTODO: write docs\n", 1_700_000_001],
    ["setup.py", "import os\nprint('setup')\n", 1_700_000_005],
    [".hidden.py", "secret = 1\n", 1_700_000_002],
    ["src/app.py", "import sys\n\ndef main():\n    # TODO fix\n    return 1\r\nx = 2\r\n", 1_700_000_009],
    ["src/util.pyi", "def f() -> int: ...\n", 1_700_000_003],
    ["src/web/index.ts", "const x = 1; // TODO\nexport default x;\n", 1_700_000_007],
    ["src/web/view.tsx", "export const View = () => null;\nTODO\nTODO again\n", 1_700_000_004],
    ["docs/notes.txt", "alpha\nbeta\u2028gamma\nTODO: Ünïcode\n", 1_700_000_006],
    ["data/blob.bin", b"\xff\xfe\x00TODO\x00".decode("latin-1"), 1_700_000_008],
    ["big.log", "TODO " * 300_000, 1_700_000_010],
]
# link name -> target (relative to the root; "OUTSIDE" is a file outside the root)
LINKS = [["src/escape.py", "OUTSIDE"], ["outdir", "OUTSIDE_DIR"], ["src/alias.py", "src/app.py"]]

CALLS = [
    ["glob_search", {"pattern": "**/*.py"}],
    ["glob_search", {"pattern": "*.py"}],
    ["glob_search", {"pattern": "*.{py,pyi}"}],
    ["glob_search", {"pattern": "src/**/*.ts*"}],
    ["glob_search", {"pattern": "*.ts", "path": "/src/web"}],
    ["glob_search", {"pattern": "*.ts", "path": "src/web"}],
    ["glob_search", {"pattern": "**/*"}],
    ["glob_search", {"pattern": "**"}],
    ["glob_search", {"pattern": "s?tup.[p]y"}],
    ["glob_search", {"pattern": "../*"}],
    ["glob_search", {"pattern": "/etc/*"}],
    ["glob_search", {"pattern": "*", "path": "/../"}],
    ["glob_search", {"pattern": "*", "path": "~"}],
    ["glob_search", {"pattern": "*", "path": "/outdir"}],
    ["glob_search", {"pattern": "*", "path": "/missing"}],
    ["glob_search", {"pattern": "*", "path": "/setup.py"}],
    ["glob_search", {"pattern": "*.rs"}],
    ["grep_search", {"pattern": "TODO"}],
    ["grep_search", {"pattern": "TODO", "output_mode": "content"}],
    ["grep_search", {"pattern": "TODO", "output_mode": "count"}],
    ["grep_search", {"pattern": "TODO", "include": "*.{ts,tsx}", "output_mode": "content"}],
    ["grep_search", {"pattern": "TODO", "include": "*.py"}],
    ["grep_search", {"pattern": "^x = \\d$", "output_mode": "content"}],
    ["grep_search", {"pattern": "gamma|beta", "output_mode": "content", "path": "/docs"}],
    ["grep_search", {"pattern": "import", "path": "/src", "output_mode": "content"}],
    ["grep_search", {"pattern": "TODO", "path": "/../etc"}],
    ["grep_search", {"pattern": "TODO", "path": "/outdir"}],
    ["grep_search", {"pattern": "TODO", "path": "/README.md"}],
    ["grep_search", {"pattern": "nothing-here"}],
    ["grep_search", {"pattern": "TODO", "include": "*.{py"}],
    ["grep_search", {"pattern": "TODO", "include": "*.py}"}],
    ["grep_search", {"pattern": "TODO", "include": "*.{}"}],
    ["grep_search", {"pattern": "TODO", "include": ""}],
    ["grep_search", {"pattern": "(unclosed"}],
    ["grep_search", {"pattern": "[abc"}],
    ["grep_search", {"pattern": "*x"}],
    ["grep_search", {"pattern": "a)"}],
    ["grep_search", {"pattern": "TODO", "output_mode": "bogus"}],
]


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


def lay_out(top):
    root = os.path.join(top, "root")
    os.makedirs(root)
    for path, content, mtime in TREE:
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(content.encode("latin-1") if path.endswith(".bin") else content.encode())
        os.utime(full, (mtime, mtime))
    with open(os.path.join(top, "OUTSIDE"), "w") as f:
        f.write("TODO outside\n")
    os.makedirs(os.path.join(top, "OUTSIDE_DIR"))
    with open(os.path.join(top, "OUTSIDE_DIR", "x.py"), "w") as f:
        f.write("TODO outside dir\n")
    for link, target in LINKS:
        dest = os.path.join(top, target) if target.startswith("OUTSIDE") else os.path.join(root, target)
        os.symlink(dest, os.path.join(root, link))
    return root


def run(tools, name, args):
    try:
        return {"ok": tools[name].invoke(args)}
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__}


def main():
    top = tempfile.mkdtemp()
    root = lay_out(top)
    mw = FilesystemFileSearchMiddleware(root_path=root, max_file_size_mb=1)
    tools = {t.name: t for t in mw.tools}
    out = {"tree": TREE, "links": LINKS, "max_file_size_mb": 1}
    out["tools"] = [convert_to_openai_tool(t)["function"] for t in mw.tools]
    out["calls"] = [[n, a, run(tools, n, a)] for n, a in CALLS]
    agent_calls = [
        {"name": "glob_search", "args": {"pattern": "**/*.py"}, "id": "c1"},
        {"name": "grep_search", "args": {"pattern": "TODO", "output_mode": "count"}, "id": "c2"},
    ]
    model = Model(messages=iter([AIMessage("", id="ai-1", tool_calls=agent_calls), AIMessage("Found them.", id="ai-2")]))
    agent = create_agent(model, [], middleware=[mw])
    out["mermaid"] = agent.get_graph().draw_mermaid()
    result = agent.invoke({"messages": [HumanMessage("Find the TODOs.", id="h1")]})
    out["agent"] = [
        {k: v for k, v in m.model_dump().items() if k in ("type", "content", "name", "tool_call_id", "status", "id")}
        for m in result["messages"]
    ]
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)


main()
