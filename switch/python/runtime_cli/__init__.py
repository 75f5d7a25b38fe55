"""simple_switch_CLI-compatible runtime CLI: parser, executor, TCP server and client.

The switch process serves it on its `--thrift-port`::

    executor = Executor(engine, json_text, ports=[1, 2])
    server = RuntimeCliServer(executor, port=9090, lock=engine_lock)
    server.start()          # background thread; server.close() at shutdown

where `engine_lock` is the lock the switch holds while it drives the engine.
Anything else reading simple_switch_CLI lines (the STF runner) can use
`parse_command(line)` alone, or `Executor(engine, json_text).run(command)`.
"""

from bufferlab.switch.runtime_cli.commands import Command, CommandError, Key, Number, parse_command
from bufferlab.switch.runtime_cli.executor import Answer, Executor
from bufferlab.switch.runtime_cli.transport import RuntimeCliConnection, RuntimeCliServer

__all__ = [
    "Answer",
    "Command",
    "CommandError",
    "Executor",
    "Key",
    "Number",
    "RuntimeCliConnection",
    "RuntimeCliServer",
    "parse_command",
]
