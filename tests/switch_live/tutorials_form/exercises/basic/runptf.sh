#!/bin/bash
# `make test` of a tutorials-form exercise (../../README.md), in the steps of the tutorials'
# runptf.sh: veth pairs, the program compiled with the p4c driver, simple_switch_grpc started
# through sudo with no program, ptf run through sudo (`which ptf`) with the gRPC address,
# P4Info and JSON as test parameters, the switch stopped. VETH (name prefix), GRPC_PORT and
# THRIFT_PORT come from the environment; only this script's switch is stopped.
set -u
V=${VETH:-veth}
GRPC_PORT=${GRPC_PORT:-9559}
THRIFT_PORT=${THRIFT_PORT:-9090}
PORTS=4
SWITCH=

stop() {
    [ -n "$SWITCH" ] && sudo kill "$SWITCH" 2>/dev/null && wait "$SWITCH"
    for n in $(seq 0 $((PORTS - 1))); do sudo ip link del "${V}$((2 * n))" 2>/dev/null; done
}
trap stop EXIT

set -ex
for n in $(seq 0 $((PORTS - 1))); do
    a=${V}$((2 * n)); b=${V}$((2 * n + 1))
    sudo ip link add "$a" type veth peer name "$b"
    for i in "$a" "$b"; do
        sudo sysctl -qw "net.ipv6.conf.$i.disable_ipv6=1"
        sudo ethtool -K "$i" rx off tx off sg off tso off gso off gro off >/dev/null
        sudo ip link set "$i" up
    done
done

mkdir -p build logs
p4c --target bmv2 --arch v1model --p4runtime-files build/basic.p4info.txtpb -o build basic.p4
rm -f ss-log.txt

sudo simple_switch_grpc --log-file ss-log --log-flush --dump-packet-data 10000 \
     -i 0@${V}0 -i 1@${V}2 -i 2@${V}4 -i 3@${V}6 --no-p4 --thrift-port "$THRIFT_PORT" \
     -- --grpc-server-addr "127.0.0.1:$GRPC_PORT" &
SWITCH=$!
for _ in $(seq 100); do ss -Hltn "sport = :$GRPC_PORT" | grep -q . && break; sleep 0.2; done

sudo ${P4_EXTRA_SUDO_OPTS:-} `which ptf` --pypath ../../utils \
     -i 0@${V}1 -i 1@${V}3 -i 2@${V}5 -i 3@${V}7 \
     --test-params="grpcaddr='127.0.0.1:$GRPC_PORT';p4info='build/basic.p4info.txtpb';config='build/basic.json'" \
     --test-dir ptf
