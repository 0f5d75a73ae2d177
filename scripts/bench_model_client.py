"""Python's baseline for BENCHMARKS.md: the CPU time the *client* process spends per model
call with langchain-openai's ChatOpenAI (and langchain-anthropic's ChatAnthropic through
LiteLLM), against the local servers of scripts/model-servers.sh.

The figure is this process's own user+system CPU time (resource.getrusage(RUSAGE_SELF)), so
the servers' time is not in it; the wall time per call is printed beside it for context.
Each mode runs a few warm-up calls first (imports, connection set-up) that are not counted.

Usage (after `eval "$(bash scripts/model-servers.sh env)"`):
    python scripts/bench_model_client.py [--calls N] [--warmup N] [--only openai|anthropic]
"""

import argparse
import os
import resource
import sys
import time


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(name, calls, warmup, one_call):
    for _ in range(warmup):
        one_call()
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    for _ in range(calls):
        one_call()
    cpu = cpu_seconds() - cpu0
    wall = time.perf_counter() - wall0
    print(
        f"{name:<28} calls={calls:<5} client CPU/call={cpu / calls * 1e3:8.3f} ms"
        f"   wall/call={wall / calls * 1e3:8.3f} ms"
    )
    sys.stdout.flush()


def bench_openai(calls, warmup):
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        base_url=os.environ["STATEGRAPH_OPENAI_BASE_URL"],
        model=os.environ["STATEGRAPH_OPENAI_MODEL"],
        api_key="none",
        temperature=0,
        max_tokens=16,
    )
    messages = [("user", "Say something.")]

    def invoke():
        assert model.invoke(messages).content

    def stream():
        assert "".join(chunk.content for chunk in model.stream(messages))

    measure("ChatOpenAI invoke", calls, warmup, invoke)
    measure("ChatOpenAI stream", calls, warmup, stream)


def bench_anthropic(calls, warmup):
    from langchain_anthropic import ChatAnthropic

    model = ChatAnthropic(
        base_url=os.environ["STATEGRAPH_ANTHROPIC_BASE_URL"],
        model=os.environ["STATEGRAPH_ANTHROPIC_MODEL"],
        api_key="none",
        temperature=0,
        max_tokens=16,
    )
    messages = [("user", "Say something.")]

    def invoke():
        assert model.invoke(messages).content

    def stream():
        assert "".join(str(chunk.content) for chunk in model.stream(messages))

    measure("ChatAnthropic invoke", calls, warmup, invoke)
    measure("ChatAnthropic stream", calls, warmup, stream)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--only", choices=["openai", "anthropic"])
    args = parser.parse_args()
    if args.only in (None, "openai"):
        bench_openai(args.calls, args.warmup)
    if args.only in (None, "anthropic"):
        bench_anthropic(args.calls, args.warmup)


if __name__ == "__main__":
    main()
