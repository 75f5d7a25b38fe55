#!/usr/bin/env python3
"""The network of a tutorials-form exercise (../README.md), in the steps of the tutorials'
run_exercise.py: read topology.json, build Mininet with one P4Runtime switch process per
switch (the `-b` binary, looked up on the PATH), start it, run the hosts' commands, program
each switch from its runtime JSON over P4Runtime (requests dumped to
logs/<sw>-p4runtime-requests.txt), print where the logs are, open the Mininet CLI and take
the network down when it ends.

    python3 run_exercise.py -t topology.json -j build/basic.json -b simple_switch_grpc
        [--grpc-base 50051] [--thrift-base 9090]
"""

import argparse
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import p4rt
from mininet.cli import CLI
from mininet.link import Link
from mininet.net import Mininet
from mininet.node import Host, Switch

START_TIMEOUT_S = 10.0


class P4RuntimeSwitch(Switch):
    """A switch node whose data plane is a simple_switch_grpc-style process on its ports."""

    def __init__(self, name, sw_path, json_path, grpc_port, thrift_port, device_id, **params):
        super().__init__(name, **params)
        self.sw_path, self.json_path = sw_path, json_path
        self.grpc_port, self.thrift_port, self.device_id = grpc_port, thrift_port, device_id
        self.process = None

    def start(self, controllers):
        argv = [self.sw_path]
        for port, intf in sorted(self.intfs.items()):
            if intf.name != "lo":
                argv += ["-i", f"{port}@{intf.name}"]
        argv += ["--pcap", "pcaps", "--device-id", str(self.device_id), self.json_path,
                 "--log-console", "--thrift-port", str(self.thrift_port), "--",
                 "--grpc-server-addr", f"127.0.0.1:{self.grpc_port}"]
        with open(f"logs/{self.name}.log", "w") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and self.process.poll() is None:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.grpc_port)) == 0:
                    return
            time.sleep(0.1)
        print(f"P4 switch {self.name} did not start correctly; logs/{self.name}.log:")
        print(Path(f"logs/{self.name}.log").read_text())
        raise SystemExit(1)

    def stop(self, deleteIntfs=True):  # noqa: N803 (Mininet's name)
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        super().stop(deleteIntfs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("-t", "--topo", required=True)
    parser.add_argument("-j", "--switch-json", required=True)
    parser.add_argument("-b", "--behavioral-exe", required=True)
    parser.add_argument("--grpc-base", type=int, default=50051)
    parser.add_argument("--thrift-base", type=int, default=9090)
    args = parser.parse_args()
    topo = json.loads(Path(args.topo).read_text())

    net = Mininet(build=False, controller=None, host=Host, link=Link, autoSetMacs=False)
    grpc_ports = {}
    for index, name in enumerate(topo["switches"]):
        grpc_ports[name] = args.grpc_base + index
        net.addSwitch(name, cls=P4RuntimeSwitch, sw_path=args.behavioral_exe,
                      json_path=args.switch_json, grpc_port=grpc_ports[name],
                      thrift_port=args.thrift_base + index, device_id=index)
    for name, host in topo["hosts"].items():
        net.addHost(name, ip=host["ip"], mac=host["mac"])
    for a, b in topo["links"]:
        ends = {}
        for end, suffix in ((a, "1"), (b, "2")):
            node, _, port = end.partition("-p")
            ends[f"node{suffix}"] = node
            ends[f"port{suffix}" if port else f"intfName{suffix}"] = int(port) if port else "eth0"
        net.addLink(ends.pop("node1"), ends.pop("node2"), **ends)
    net.build()
    net.start()
    try:
        for name, host in topo["hosts"].items():
            for command in host.get("commands", []):
                net.get(name).cmd(command)
        for index, (name, switch) in enumerate(topo["switches"].items()):
            p4rt.program_switch(f"127.0.0.1:{grpc_ports[name]}", index,
                                Path(switch["runtime_json"]),
                                Path(f"logs/{name}-p4runtime-requests.txt"))
        print("Network is up. Each switch's log: logs/<switch>.log; its P4Runtime requests:"
              " logs/<switch>-p4runtime-requests.txt; captures: pcaps/.")
        sys.stdout.flush()
        CLI(net)
    finally:
        net.stop()


if __name__ == "__main__":
    main()
