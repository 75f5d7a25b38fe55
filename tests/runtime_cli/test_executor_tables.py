"""Table commands against a real engine: effects seen in forwarding, outputs as BMv2 prints them."""

from cli_helpers import run_err, run_ok, send
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

ROUTE = "table_add ipv4_lpm ipv4_forward 10.0.1.1/32 => 08:00:00:00:01:11 1"


def ipv4_frame(dst: str, tos: int = 0, proto: int = 17, ttl: int = 64) -> bytes:
    return bytes(Ether(dst="00:00:00:00:00:02", src="00:00:00:00:00:01")
                 / IP(src="10.0.0.1", dst=dst, tos=tos, proto=proto, ttl=ttl) / UDP(sport=1, dport=2))


def test_table_add_forwards_and_prints_like_bmv2(cli):
    x = cli("ipv4_lpm_router")
    assert send(x, 0, ipv4_frame("10.0.1.1")) == []  # default action: drop
    assert run_ok(x, ROUTE) == (
        "Adding entry to lpm match table RouterIngress.ipv4_lpm\n"
        "match key:           LPM-0a:00:01:01/32\n"
        "action:              RouterIngress.ipv4_forward\n"
        "runtime data:        08:00:00:00:01:11\t00:01\n"
        "Entry has been added with handle 0"
    )
    [(port, frame)] = send(x, 0, ipv4_frame("10.0.1.1"))
    assert port == 1
    assert frame[:6] == bytes.fromhex("080000000111")
    assert frame[22] == 63  # TTL decremented


def test_full_names_and_unique_suffixes_are_accepted(cli):
    x = cli("ipv4_lpm_router")
    run_ok(x, "table_add RouterIngress.ipv4_lpm RouterIngress.ipv4_forward 10.0.2.0/24 => 0x080000000222 2")
    assert [p for p, _ in send(x, 0, ipv4_frame("10.0.2.9"))] == [2]


def test_table_dump_and_dump_entry_format(cli):
    x = cli("ipv4_lpm_router")
    run_ok(x, ROUTE, "table_add ipv4_lpm ipv4_forward 10.0.2.0/24 => 08:00:00:00:02:22 2")
    assert run_ok(x, "table_dump ipv4_lpm") == "\n".join([
        "==========",
        "TABLE ENTRIES",
        "**********",
        "Dumping entry 0x0",
        "Match key:",
        "* ipv4.dstAddr        : LPM       0a000101/32",
        "Action entry: RouterIngress.ipv4_forward - 080000000111, 0001",
        "**********",
        "Dumping entry 0x1",
        "Match key:",
        "* ipv4.dstAddr        : LPM       0a000200/24",
        "Action entry: RouterIngress.ipv4_forward - 080000000222, 0002",
        "==========",
        "Dumping default entry",
        "Action entry: RouterIngress.drop - ",
        "==========",
    ])
    assert run_ok(x, "table_dump_entry ipv4_lpm 1").splitlines()[0] == "Dumping entry 0x1"
    assert run_ok(x, "table_num_entries ipv4_lpm") == "2"


def test_modify_delete_default_and_clear_change_forwarding(cli):
    x = cli("ipv4_lpm_router")
    run_ok(x, ROUTE)
    assert run_ok(x, "table_modify ipv4_lpm ipv4_forward 0 => 08:00:00:00:01:12 3") == (
        "Modifying entry 0 for lpm match table RouterIngress.ipv4_lpm"
    )
    assert [p for p, _ in send(x, 0, ipv4_frame("10.0.1.1"))] == [3]
    run_ok(x, "table_set_default ipv4_lpm ipv4_forward 08:00:00:00:09:09 4")
    assert [p for p, _ in send(x, 0, ipv4_frame("10.9.9.9"))] == [4]
    assert "Dumping default entry\nAction entry: RouterIngress.ipv4_forward - 080000000909, 0004" in run_ok(
        x, "table_dump ipv4_lpm")
    assert run_ok(x, "table_delete ipv4_lpm 0") == "Deleting entry 0 from RouterIngress.ipv4_lpm"
    assert [p for p, _ in send(x, 0, ipv4_frame("10.0.1.1"))] == [4]
    run_ok(x, "table_reset_default ipv4_lpm")
    assert send(x, 0, ipv4_frame("10.0.1.1")) == []
    run_ok(x, ROUTE, "table_clear ipv4_lpm")
    assert run_ok(x, "table_num_entries ipv4_lpm") == "0"
    assert send(x, 0, ipv4_frame("10.0.1.1")) == []


def test_table_errors(cli):
    x = cli("ipv4_lpm_router")
    assert run_err(x, "table_add nope ipv4_forward 10.0.0.1/32 => 1 1") == "Error: Invalid table name (nope)"
    assert "Invalid action name" in run_err(x, "table_add ipv4_lpm forward 10.0.0.1/32 => 1 1")
    assert run_err(x, "table_add ipv4_lpm ipv4_forward 10.0.0.1/32 1 => 1 1") == (
        "Error: Table RouterIngress.ipv4_lpm needs 1 key fields")
    assert "use '/' to separate prefix and length" in run_err(x, "table_add ipv4_lpm ipv4_forward 10.0.0.1 => 1 1")
    assert "prefix length is at most 32" in run_err(x, "table_add ipv4_lpm ipv4_forward 10.0.0.1/33 => 1 1")
    assert run_err(x, "table_add ipv4_lpm ipv4_forward 10.0.0.1/32 => 1") == (
        "Error: Action RouterIngress.ipv4_forward needs 2 parameters")
    assert run_err(x, "table_add ipv4_lpm ipv4_forward 10.0.0.1/32 => 1 512") == (
        "Error: Invalid runtime data: Error while parsing 512 - value does not fit in 9 bits (port)")
    assert "priority only applies" in run_err(x, "table_add ipv4_lpm ipv4_forward 10.0.0.1/32 => 1 1 5")
    run_ok(x, ROUTE)
    # Like BMv2, the entry is described before the switch refuses it.
    assert run_err(x, ROUTE).splitlines()[-1].startswith("Invalid table operation (DUPLICATE_ENTRY)")
    assert run_err(x, "table_delete ipv4_lpm 7").splitlines()[-1].startswith("Invalid table operation (INVALID_HANDLE)")
    assert run_err(x, "table_dump_entry ipv4_lpm 7").splitlines()[-1].startswith("Invalid table operation (INVALID_HANDLE)")
    assert run_ok(x, "table_num_entries ipv4_lpm") == "1"  # nothing lost


def test_table_info_show_tables_and_actions(cli):
    x = cli("ipv4_lpm_router")
    assert run_ok(x, "table_info ipv4_lpm") == "\n".join([
        f"{'RouterIngress.ipv4_lpm':30} [implementation=None, mk=ipv4.dstAddr(lpm, 32)]",
        "*" * 80,
        f"{'NoAction':30} []",
        f"{'RouterIngress.drop':30} []",
        f"{'RouterIngress.ipv4_forward':30} [dstAddr(48),\tport(9)]",
    ])
    assert "RouterIngress.ipv4_lpm" in run_ok(x, "show_tables")
    assert f"{'RouterIngress.ipv4_forward':30} [dstAddr(48),\tport(9)]" in run_ok(x, "show_actions")
    assert run_ok(x, "table_show_actions ipv4_lpm").count("\n") == 2


def result(x, dst, table, **kw):
    """(port, identification) of the one output frame of the table fixture."""
    [(port, frame)] = send(x, 2, ipv4_frame(dst, tos=table, **kw))
    return port, int.from_bytes(frame[18:20], "big")


TERNARY, RANGE, INDIRECT, SELECTOR, CONST, HITMISS, DMETER, LPM = range(1, 9)


def test_ternary_entries_need_a_priority_and_lowest_wins(tables_cli):
    x = tables_cli
    assert "then a priority (lower number wins)" in run_err(
        x, "table_add t_ternary set_res 10.1.0.0&&&255.255.0.0 17 => 1")
    run_ok(x, "table_add t_ternary set_res 10.1.0.0&&&255.255.0.0 17 => 1 20",
           "table_add t_ternary set_res 10.1.2.0&&&0xffffff00 17 => 2 10",
           "table_add t_ternary set_res * 6 => 3 30")
    assert result(x, "10.1.2.3", TERNARY) == (1, 2)
    assert result(x, "10.1.3.3", TERNARY) == (1, 1)
    assert result(x, "10.9.3.3", TERNARY, proto=6) == (1, 3)
    dump = run_ok(x, "table_dump_entry t_ternary 1").splitlines()
    assert dump == [
        "Dumping entry 0x1",
        "Match key:",
        "* ipv4.dstAddr        : TERNARY   0a010200 &&& ffffff00",
        "* ipv4.protocol       : EXACT     11",
        "Priority: 10",
        "Action entry: MyIngress.set_res - 0002",
    ]
    assert "use '&&&' to separate value and mask" in run_err(x, "table_add t_ternary set_res 10.1.0.0 17 => 1 5")


def test_range_entries(tables_cli):
    x = tables_cli
    run_ok(x, "table_add t_range set_res 10->20 => 1 2", "table_add t_range set_res 15->30 => 2 1")
    assert result(x, "10.0.0.9", RANGE, ttl=12) == (1, 1)
    assert result(x, "10.0.0.9", RANGE, ttl=17) == (1, 2)
    assert "RANGE     0f -> 1e" in run_ok(x, "table_dump_entry t_range 1")
    assert "range start is greater than range end" in run_err(x, "table_add t_range set_res 30->10 => 1 3")
    assert "use '->'" in run_err(x, "table_add t_range set_res 30 => 1 3")


def test_const_table_and_const_default_are_refused(cli):
    x = cli("acl_ternary_const_entries")
    assert run_err(x, "table_add acl permit 10.0.0.0&&&0xff000000 * 6&&&0xff => 1 1").splitlines()[-1].startswith(
        "Invalid table operation (IMMUTABLE_TABLE_ENTRY)")
    assert run_err(x, "table_set_default acl permit 1").splitlines()[-1].startswith(
        "Invalid table operation (DEFAULT_ACTION_IS_CONST)")
    dump = run_ok(x, "table_dump acl")
    assert "* ipv4.srcAddr        : TERNARY   0a000000 &&& ff000000" in dump
    assert "Priority: 1" in dump and "Action entry: AclIngress.permit - 0001" in dump


def test_indirect_table_with_members(cli):
    x = cli("action_profile_wcmp")
    assert run_ok(x, "act_prof_create_member next_hops set_next_hop 08:00:00:00:01:11 1") == (
        "Member has been created with handle 0")
    assert run_ok(x, "act_prof_create_member next_hops set_next_hop 08:00:00:00:02:22 2").endswith("handle 1")
    assert run_ok(x, "table_indirect_add host_routes 10.0.1.1 => 1") == (
        "Adding entry to indirect match table ApIngress.host_routes\nEntry has been added with handle 0")
    run_ok(x, "table_indirect_add prefix_routes 10.0.0.0/8 => 0")
    [(port, frame)] = send(x, 0, ipv4_frame("10.0.1.1"))
    assert (port, frame[:6]) == (2, bytes.fromhex("080000000222"))
    assert [p for p, _ in send(x, 0, ipv4_frame("10.7.7.7"))] == [1]
    run_ok(x, "act_prof_modify_member next_hops set_next_hop 1 08:00:00:00:03:33 3")
    assert [p for p, _ in send(x, 0, ipv4_frame("10.0.1.1"))] == [3]
    dump = run_ok(x, "table_dump host_routes")
    assert "Index: member(1)" in dump
    assert "MEMBERS\n**********\nDumping member 0\nAction entry: ApIngress.set_next_hop - 080000000111, 0001" in dump
    assert run_err(x, "act_prof_delete_member next_hops 1").splitlines()[-1].startswith("Invalid table operation (MBR_STILL_USED)")
    assert run_err(x, "table_indirect_add host_routes 10.0.1.2 => 9").splitlines()[-1].startswith(
        "Invalid table operation (INVALID_MBR_HANDLE)")
    assert run_err(x, "act_prof_create_group next_hops") == (
        "Error: Cannot run this command on an action profile without selector")
    assert "non-indirect table" in run_err(x, "table_indirect_add_with_group host_routes 10.0.1.2 => 0")
    run_ok(x, "table_delete host_routes 0", "act_prof_delete_member next_hops 1")
    assert run_ok(x, "act_prof_create_member next_hops drop").endswith("handle 1")  # lowest free handle


def test_selector_groups(tables_cli):
    x = tables_cli
    run_ok(x, "act_prof_create_member sel set_res_port 7 1", "act_prof_create_member sel set_res_port 8 1")
    assert run_ok(x, "act_prof_create_group sel") == "Group has been created with handle 0"
    run_ok(x, "act_prof_add_member_to_group sel 1 0")
    assert run_err(x, "act_prof_add_member_to_group sel 1 0").splitlines()[-1].startswith(
        "Invalid table operation (MBR_ALREADY_IN_GRP)")
    run_ok(x, "table_indirect_add_with_group t_selector 10.0.0.9 => 0")
    assert result(x, "10.0.0.9", SELECTOR) == (1, 8)
    run_ok(x, "act_prof_add_member_to_group sel 0 0", "act_prof_remove_member_from_group sel 1 0")
    assert result(x, "10.0.0.9", SELECTOR) == (1, 7)
    assert "GROUPS\n**********\nDumping group 0\nMembers: [0]" in run_ok(x, "act_prof_dump sel")
    assert run_err(x, "act_prof_remove_member_from_group sel 1 0").splitlines()[-1].startswith(
        "Invalid table operation (MBR_NOT_IN_GRP)")


def test_members_and_groups_of_another_client_are_shown_and_used(tables_cli):
    x, e = tables_cli, tables_cli.engine
    # As the P4Runtime server would: members 0 and 3, group 2, an entry pointing at the group.
    e.profile_member_set("MyIngress.sel", 0, "MyIngress.set_res_port", [7, 1])
    e.profile_member_set("MyIngress.sel", 3, "MyIngress.set_res_port", [8, 2])
    e.profile_group_set("MyIngress.sel", 2, [3])
    e.table_add_group("MyIngress.t_selector", ["10.0.0.9"], 2)
    dump = run_ok(x, "act_prof_dump sel")
    assert "MEMBERS\n**********\nDumping member 0\nAction entry: MyIngress.set_res_port - 0007, 0001" in dump
    assert "Dumping member 3\nAction entry: MyIngress.set_res_port - 0008, 0002" in dump
    assert "GROUPS\n**********\nDumping group 2\nMembers: [3]" in dump
    assert "Index: group(2)" in run_ok(x, "table_dump t_selector")
    assert run_ok(x, "act_prof_dump_group sel 2") == "Dumping group 2\nMembers: [3]"
    assert run_ok(x, "act_prof_dump_member sel 3") == "Dumping member 3\nAction entry: MyIngress.set_res_port - 0008, 0002"
    # New handles skip the other client's; its group can be changed here.
    assert run_ok(x, "act_prof_create_member sel set_res_port 9 3").endswith("handle 1")
    assert run_ok(x, "act_prof_create_group sel") == "Group has been created with handle 0"
    run_ok(x, "act_prof_add_member_to_group sel 0 2", "act_prof_remove_member_from_group sel 3 2")
    assert result(x, "10.0.0.9", SELECTOR) == (1, 7)
    assert run_err(x, "act_prof_delete_group sel 2").splitlines()[-1].startswith(
        "Invalid table operation (GRP_STILL_USED)")
    assert run_err(x, "act_prof_delete_member sel 0").splitlines()[-1].startswith(
        "Invalid table operation (MBR_STILL_USED)")
    run_ok(x, "act_prof_delete_group sel 0")
    assert run_err(x, "act_prof_dump_group sel 0").startswith("Invalid table operation (INVALID_GRP_HANDLE)")


def test_table_indirect_modify_repoints_entries(cli, tables_cli):
    x = cli("action_profile_wcmp")
    run_ok(x, "act_prof_create_member next_hops set_next_hop 08:00:00:00:01:11 1",
           "act_prof_create_member next_hops set_next_hop 08:00:00:00:02:22 2",
           "table_indirect_add host_routes 10.0.1.1 => 0")
    assert [p for p, _ in send(x, 0, ipv4_frame("10.0.1.1"))] == [1]
    assert run_ok(x, "table_indirect_modify host_routes 0 1") == (
        "Modifying entry 0 for exact match table ApIngress.host_routes")
    assert [p for p, _ in send(x, 0, ipv4_frame("10.0.1.1"))] == [2]
    assert "Index: member(1)" in run_ok(x, "table_dump host_routes")
    assert run_err(x, "table_indirect_modify host_routes 0 9").splitlines()[-1].startswith(
        "Invalid table operation (INVALID_MBR_HANDLE)")
    assert run_err(x, "table_indirect_modify host_routes 5 1").startswith("Invalid table operation (INVALID_HANDLE)")
    assert "non-indirect table" in run_err(x, "table_indirect_modify_with_group host_routes 0 0")
    t = tables_cli
    run_ok(t, "act_prof_create_member sel set_res_port 7 1", "act_prof_create_member sel set_res_port 8 2",
           "act_prof_create_group sel", "act_prof_add_member_to_group sel 1 0",
           "table_indirect_add t_selector 10.0.0.9 => 0")
    assert result(t, "10.0.0.9", SELECTOR) == (1, 7)
    run_ok(t, "table_indirect_modify_with_group t_selector 0 0")
    assert result(t, "10.0.0.9", SELECTOR) == (2, 8)
    assert run_err(t, "table_indirect_modify_with_group t_selector 0 5").splitlines()[-1].startswith(
        "Invalid table operation (INVALID_GRP_HANDLE)")


def test_table_add_on_an_indirect_table_points_to_the_indirect_commands(cli):
    x = cli("action_profile_wcmp")
    assert run_err(x, "table_add host_routes set_next_hop 10.0.0.1 => 1 1") == (
        "Error: Table ApIngress.host_routes is indirect: add members with act_prof_create_member, "
        "then entries with table_indirect_add")


def test_dump_entry_from_key(cli, tables_cli):
    x = cli("ipv4_lpm_router")
    run_ok(x, ROUTE)
    assert run_ok(x, "table_dump_entry_from_key ipv4_lpm 10.0.1.1/32").splitlines()[0] == "Dumping entry 0x0"
    assert run_err(x, "table_dump_entry_from_key ipv4_lpm 10.0.1.0/24").startswith(
        "Invalid table operation (INVALID_HANDLE)")
    run_ok(tables_cli, "table_add t_ternary set_res 10.1.0.0&&&255.255.0.0 17 => 1 20")
    assert "Priority: 20" in run_ok(tables_cli, "table_dump_entry_from_key t_ternary 10.1.0.0&&&255.255.0.0 17 20")
    assert "give the priority after the key" in run_err(
        tables_cli, "table_dump_entry_from_key t_ternary 10.1.0.0&&&255.255.0.0 6&&&0xff")


def test_dump_member_and_group(tables_cli):
    x = tables_cli
    run_ok(x, "act_prof_create_member sel set_res_port 7 1", "act_prof_create_group sel",
           "act_prof_add_member_to_group sel 0 0")
    assert run_ok(x, "act_prof_dump_member sel 0") == (
        "Dumping member 0\nAction entry: MyIngress.set_res_port - 0007, 0001")
    assert run_ok(x, "act_prof_dump_group sel 0") == "Dumping group 0\nMembers: [0]"
    assert run_err(x, "act_prof_dump_member sel 5").startswith("Invalid table operation (INVALID_MBR_HANDLE)")
    assert run_err(x, "act_prof_dump_group prof 0") == (
        "Error: Cannot run this command on an action profile without selector")


def test_custom_crc_parameters_change_the_hash(cli):
    import binascii

    x = cli("hash_all_algorithms")
    crc16 = next(n for n, w in x.program.crc_calcs.items() if w == 16)
    crc32 = next(n for n, w in x.program.crc_calcs.items() if w == 32)
    src = "10.1.2.3"
    # CRC-16/XMODEM: polynomial 0x1021, initial 0, no reflection, no final xor (binascii.crc_hqx).
    run_ok(x, f"set_crc16_parameters {crc16} 0x1021 0 0 false false")
    frame = bytes(Ether() / IP(src=src, dst="10.0.0.2") / UDP())
    [(_, out)] = send(x, 0, frame)
    assert int.from_bytes(out[44:46], "big") == binascii.crc_hqx(bytes([10, 1, 2, 3]), 0)
    run_ok(x, f"set_crc16_parameters {crc16} 0x1021 0xffff 0 0 0")
    [(_, out)] = send(x, 0, frame)
    assert int.from_bytes(out[44:46], "big") == binascii.crc_hqx(bytes([10, 1, 2, 3]), 0xFFFF)
    assert run_err(x, f"set_crc16_parameters {crc32} 0x1021 0 0 false false") == f"Error: Invalid crc16_custom name ({crc32})"
    assert run_err(x, f"set_crc32_parameters {crc32} 0x1ffffffff 0 0 false false") == (
        "Error: Integer cannot fit within 32 bits")
    assert "Invalid bool parameter" in run_err(x, f"set_crc32_parameters {crc32} 1 0 0 maybe false")
