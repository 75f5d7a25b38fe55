"""simple_switch_CLI-compatible runtime CLI: parser, executor, TCP server and client."""

from bufferlab.switch.runtime_cli.commands import Command, CommandError, Key, Number, parse_command
from bufferlab.switch.runtime_cli.executor import Answer, Executor

__all__ = ["Answer", "Command", "CommandError", "Executor", "Key", "Number", "parse_command"]
