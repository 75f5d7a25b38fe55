/* bufferlab: Tofino Native Architecture (Tofino 1) -- blocks and packages.
 *
 * A pipe is six blocks: ingress parser, ingress control, ingress deparser,
 * then (after the traffic manager) egress parser, egress control, egress
 * deparser. Each block type lists the intrinsic metadata the target offers
 * it; the @optional ones a program may leave off its own block (trailing or
 * not, matched in order). A Switch has one to four pipes. */

#ifndef BUFFERLAB_TOFINO1_ARCH
#define BUFFERLAB_TOFINO1_ARCH

#include "tofino1_base.p4"

parser IngressParserT<H, M>(
    packet_in pkt,
    out H hdr,
    out M ig_md,
    @optional out ingress_intrinsic_metadata_t ig_intr_md,
    @optional out ingress_intrinsic_metadata_for_tm_t ig_intr_md_for_tm,
    @optional out ingress_intrinsic_metadata_from_parser_t ig_intr_md_from_prsr);

control IngressT<H, M>(
    inout H hdr,
    inout M ig_md,
    @optional in ingress_intrinsic_metadata_t ig_intr_md,
    @optional in ingress_intrinsic_metadata_from_parser_t ig_intr_md_from_prsr,
    @optional inout ingress_intrinsic_metadata_for_deparser_t ig_intr_md_for_dprsr,
    @optional inout ingress_intrinsic_metadata_for_tm_t ig_intr_md_for_tm);

control IngressDeparserT<H, M>(
    packet_out pkt,
    inout H hdr,
    in M metadata,
    @optional in ingress_intrinsic_metadata_for_deparser_t ig_intr_md_for_dprsr,
    @optional in ingress_intrinsic_metadata_t ig_intr_md);

parser EgressParserT<H, M>(
    packet_in pkt,
    out H hdr,
    out M eg_md,
    @optional out egress_intrinsic_metadata_t eg_intr_md,
    @optional out egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr,
    @optional out egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr);

control EgressT<H, M>(
    inout H hdr,
    inout M eg_md,
    @optional in egress_intrinsic_metadata_t eg_intr_md,
    @optional in egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr,
    @optional inout egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr,
    @optional inout egress_intrinsic_metadata_for_output_port_t eg_intr_md_for_oport);

control EgressDeparserT<H, M>(
    packet_out pkt,
    inout H hdr,
    in M metadata,
    @optional in egress_intrinsic_metadata_for_deparser_t eg_intr_md_for_dprsr,
    @optional in egress_intrinsic_metadata_t eg_intr_md,
    @optional in egress_intrinsic_metadata_from_parser_t eg_intr_md_from_prsr);

/* Ingress types (IH, IM) and egress types (EH, EM) differ: what crosses the
 * traffic manager is what the ingress deparser emits (bridged metadata). */
package Pipeline<IH, IM, EH, EM>(
    IngressParserT<IH, IM> ingress_parser,
    IngressT<IH, IM> ingress,
    IngressDeparserT<IH, IM> ingress_deparser,
    EgressParserT<EH, EM> egress_parser,
    EgressT<EH, EM> egress,
    EgressDeparserT<EH, EM> egress_deparser);

@pkginfo(arch="TNA", version="2.0.1")
@noWarn("unused")
package Switch<IH0, IM0, EH0, EM0, IH1, IM1, EH1, EM1,
               IH2, IM2, EH2, EM2, IH3, IM3, EH3, EM3>(
    Pipeline<IH0, IM0, EH0, EM0> pipe0,
    @optional Pipeline<IH1, IM1, EH1, EM1> pipe1,
    @optional Pipeline<IH2, IM2, EH2, EM2> pipe2,
    @optional Pipeline<IH3, IM3, EH3, EM3> pipe3);

/* Several parsers per pipe, chosen per port by the control plane. */
package IngressParsers<H, M>(
    IngressParserT<H, M> prsr0,
    @optional IngressParserT<H, M> prsr1, @optional IngressParserT<H, M> prsr2,
    @optional IngressParserT<H, M> prsr3, @optional IngressParserT<H, M> prsr4,
    @optional IngressParserT<H, M> prsr5, @optional IngressParserT<H, M> prsr6,
    @optional IngressParserT<H, M> prsr7, @optional IngressParserT<H, M> prsr8,
    @optional IngressParserT<H, M> prsr9, @optional IngressParserT<H, M> prsr10,
    @optional IngressParserT<H, M> prsr11, @optional IngressParserT<H, M> prsr12,
    @optional IngressParserT<H, M> prsr13, @optional IngressParserT<H, M> prsr14,
    @optional IngressParserT<H, M> prsr15, @optional IngressParserT<H, M> prsr16,
    @optional IngressParserT<H, M> prsr17);

package EgressParsers<H, M>(
    EgressParserT<H, M> prsr0,
    @optional EgressParserT<H, M> prsr1, @optional EgressParserT<H, M> prsr2,
    @optional EgressParserT<H, M> prsr3, @optional EgressParserT<H, M> prsr4,
    @optional EgressParserT<H, M> prsr5, @optional EgressParserT<H, M> prsr6,
    @optional EgressParserT<H, M> prsr7, @optional EgressParserT<H, M> prsr8,
    @optional EgressParserT<H, M> prsr9, @optional EgressParserT<H, M> prsr10,
    @optional EgressParserT<H, M> prsr11, @optional EgressParserT<H, M> prsr12,
    @optional EgressParserT<H, M> prsr13, @optional EgressParserT<H, M> prsr14,
    @optional EgressParserT<H, M> prsr15, @optional EgressParserT<H, M> prsr16,
    @optional EgressParserT<H, M> prsr17);

package MultiParserPipeline<IH, IM, EH, EM>(
    IngressParsers<IH, IM> ig_prsr,
    IngressT<IH, IM> ingress,
    IngressDeparserT<IH, IM> ingress_deparser,
    EgressParsers<EH, EM> eg_prsr,
    EgressT<EH, EM> egress,
    EgressDeparserT<EH, EM> egress_deparser);

@pkginfo(arch="TNA", version="2.0.1")
@noWarn("unused")
package MultiParserSwitch<IH0, IM0, EH0, EM0, IH1, IM1, EH1, EM1,
                          IH2, IM2, EH2, EM2, IH3, IM3, EH3, EM3>(
    MultiParserPipeline<IH0, IM0, EH0, EM0> pipe0,
    @optional MultiParserPipeline<IH1, IM1, EH1, EM1> pipe1,
    @optional MultiParserPipeline<IH2, IM2, EH2, EM2> pipe2,
    @optional MultiParserPipeline<IH3, IM3, EH3, EM3> pipe3);

#endif
