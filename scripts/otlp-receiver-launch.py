"""Starts Phoenix (`phoenix serve`) with its OTLP gRPC port bound to 127.0.0.1.

Phoenix binds gRPC to "[::]" whatever PHOENIX_HOST says; scripts/otlp-receiver.sh starts
it through this file so that nothing listens beyond this machine.
"""

import sys

import grpc.aio

_server = grpc.aio.server


def _local_server(*args, **kwargs):
    server = _server(*args, **kwargs)
    add = server.add_insecure_port
    server.add_insecure_port = lambda address: add(address.replace("[::]", "127.0.0.1", 1))
    return server


grpc.aio.server = _local_server

from phoenix.server.main import main  # noqa: E402

sys.argv = ["phoenix", "serve"]
sys.exit(main())
