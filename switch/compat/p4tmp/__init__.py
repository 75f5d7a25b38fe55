"""`p4.tmp`: PI's temporary P4Runtime messages (`p4config_pb2.P4DeviceConfig`), which a BMv2
install puts beside the `p4runtime` package and the p4lang tutorials import."""
