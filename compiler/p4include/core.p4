/* bufferlab: the P4_16 core library (P4_16 specification, appendix "core.p4").
 * Declares the error codes, packet extraction and emission, and the match
 * kinds every architecture shares. Names, order and signatures match the
 * library p4c ships because the BMv2 JSON and P4Info are derived from them. */

#ifndef _CORE_P4_
#define _CORE_P4_

/* Errors a parser may signal; user programs may add more with error { }. */
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/* The packet as the parser sees it. */
extern packet_in {
    /* Read a fixed-size header and make it valid. */
    void extract<T>(out T hdr);
    /* Read a header whose varbit field takes variableFieldSizeInBits. */
    void extract<T>(out T variableSizeHeader,
                    in bit<32> variableFieldSizeInBits);
    /* Peek at the next bits without consuming them. */
    T lookahead<T>();
    /* Skip bits. */
    void advance(in bit<32> sizeInBits);
    /* Total packet length in bytes (not available on every target). */
    bit<32> length();
}

/* The packet as the deparser builds it. */
extern packet_out {
    /* Append a header (only if valid), or each element of a struct/stack. */
    void emit<T>(in T hdr);
}

/* In a parser: stop with toSignal when check is false. */
extern void verify(in bool check, in error toSignal);

/* The action that changes nothing: the usual default action. */
@noWarn("unused")
action NoAction() {}

match_kind {
    exact,
    ternary,
    lpm
}

/* Checked while compiling: fail the compilation when check is false. */
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  /* _CORE_P4_ */
