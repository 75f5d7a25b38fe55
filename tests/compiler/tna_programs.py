"""A small TNA program built from replaceable parts, for front-end and back-end tests."""

from __future__ import annotations

from pathlib import Path

TNA_DIR = Path(__file__).resolve().parent.parent / "p4" / "tna"

HEADERS = """#include <core.p4>
#include <{include}>
header ethernet_h {{ bit<48> dst; bit<48> src; bit<16> ether_type; }}
struct headers_t {{ ethernet_h ethernet; }}
struct md_t {{ bit<32> value; bit<16> index; bit<8> color; }}
"""

PARSER = """parser IgParser(packet_in pkt, out headers_t hdr, out md_t md,
                out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}
"""

INGRESS = """control Ingress(inout headers_t hdr, inout md_t md,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {{
{locals}
    apply {{
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
{body}
    }}
}}
"""

REST = """control IgDeparser(packet_out pkt, inout headers_t hdr, in md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {{
{deparser_locals}
    apply {{
{deparser_body}
        pkt.emit(hdr);
    }}
}}

parser EgParser(packet_in pkt, out headers_t hdr, out md_t md,
                out egress_intrinsic_metadata_t eg_intr_md) {{
    state start {{
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }}
}}

control Egress(inout headers_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {{
    apply {{ }}
}}

control EgDeparser(packet_out pkt, inout headers_t hdr, in md_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {{
    apply {{ pkt.emit(hdr); }}
}}

{main}
"""

MAIN = """Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;
Switch(pipe) main;"""


def tna_program(locals_: str = "", body: str = "", deparser_locals: str = "", deparser_body: str = "",
                main: str = MAIN, include: str = "tna.p4", before: str = "") -> str:
    """The program's text; the pieces go into the ingress control and deparser."""
    return (HEADERS.format(include=include) + before + PARSER + INGRESS.format(locals=locals_, body=body)
            + REST.format(deparser_locals=deparser_locals, deparser_body=deparser_body, main=main))


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first line of `text` containing `needle`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    raise ValueError(needle)
