"""The Python side of the special `as_node` forms in tests/bulk_update.rs: `END` with no
values (clear the pending tasks), `"__input__"` (values as new input) and `"__copy__"` (a
fork of the checkpoint), on the chain of `bulk_update.py`, dumped in its shape.
"""

import json
from uuid import UUID, uuid5

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END
from langgraph.types import StateUpdate

from bulk_update import dump, graph


def paused(saver, thread):
    g = graph(saver, interrupt_before=["c"])
    cfg = {"configurable": {"thread_id": thread}}
    g.invoke({"value": "x"}, cfg)
    return g, cfg


def links(saver):
    """The task id of the input writes and where the copy is stored."""
    tuples = list(saver.list({"configurable": {"thread_id": "input"}}))
    paused_at = next(t for t in tuples if t.metadata["step"] == 2)
    ids = {w[0] for w in paused_at.pending_writes if w[1] == "__start__"}
    expected = str(uuid5(UUID(paused_at.checkpoint["id"]), "__input__"))
    copies = list(saver.list({"configurable": {"thread_id": "copy"}}))
    copy, source = copies[0], copies[1]
    return {
        "input_task_id_is_uuid5": ids == {expected},
        "copy_parent_is_source_parent": copy.parent_config["configurable"]["checkpoint_id"]
        == source.parent_config["configurable"]["checkpoint_id"],
    }


def main():
    saver = InMemorySaver()
    g = graph(saver)
    # Clearing: a new thread, a paused one, and a fork of a paused checkpoint whose task
    # `c` already saved its writes (an update as `c`).
    g.update_state({"configurable": {"thread_id": "clear_fresh"}}, None, END)
    p, cfg = paused(saver, "clear")
    p.update_state(cfg, None, END)
    p, cfg = paused(saver, "clear_fork")
    at = p.get_state(cfg).config
    p.update_state(cfg, {"value": "z"}, "c")
    p.update_state(at, None, END)
    # As input: a new thread, and a paused one followed by an update as `a`.
    g.update_state({"configurable": {"thread_id": "input_fresh"}}, {"value": "i"}, "__input__")
    p, cfg = paused(saver, "input")
    p.bulk_update_state(
        cfg,
        [[StateUpdate({"trail": ["t"]}, "__input__")], [StateUpdate({"value": "w"}, "a")]],
    )
    # Copies: of a paused thread, and a copy then an update as `c`.
    p, cfg = paused(saver, "copy")
    p.update_state(cfg, None, "__copy__")
    p, cfg = paused(saver, "copy_update")
    p.bulk_update_state(
        cfg, [[StateUpdate(None, "__copy__")], [StateUpdate({"value": "q"}, "c")]]
    )
    threads = ["clear_fresh", "clear", "clear_fork", "input_fresh", "input", "copy", "copy_update"]
    errors = {}
    for name, form in [("clear", END), ("input", "__input__"), ("copy", "__copy__")]:
        try:
            p.bulk_update_state(
                {"configurable": {"thread_id": "err_" + name}},
                [[StateUpdate(None if form != "__input__" else {"value": "v"}, form),
                  StateUpdate({"value": "v"}, "a")]],
            )
        except Exception as e:  # noqa: BLE001
            errors[name] = [type(e).__name__, str(e)]
    try:
        g.update_state({"configurable": {"thread_id": "err_copy_fresh"}}, None, "__copy__")
    except Exception as e:  # noqa: BLE001
        errors["copy_fresh"] = [type(e).__name__, str(e)]
    out = {t: dump(saver, t) for t in threads}
    out["errors"] = errors
    out["links"] = links(saver)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
