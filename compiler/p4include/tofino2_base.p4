/* bufferlab: Tofino 2 Native Architecture (T2NA) -- metadata and externs.
 *
 * What a TNA program sees of the target: the intrinsic metadata the parser
 * and traffic manager hand to the blocks and read back from them, and the
 * extern objects and functions. Names, field order, widths and signatures
 * are the architecture's, because programs, BF Runtime / P4Runtime names and
 * the frames the hardware prepends depend on them; the text is bufferlab's.
 * Device widths (PortId_t, QueueId_t, ...) come from tofino2_specs.p4,
 * included before this file. */

#ifndef BUFFERLAB_TOFINO2_BASE
#define BUFFERLAB_TOFINO2_BASE

#define PACK_VERSION(a, b, c) (((a) << 24) + ((b) << 12) + (c))
#define COMPILER_VERSION PACK_VERSION(__p4c_major__, __p4c_minor__, __p4c_patchlevel__)

#include <core.p4>

/* ===================================================================== */
/* Parser error flags, as bits of *_intrinsic_metadata_from_parser_t.parser_err */

const bit<16> PARSER_ERROR_OK           = 16w0x0000;
const bit<16> PARSER_ERROR_NO_MATCH     = 16w0x0001;
const bit<16> PARSER_ERROR_PARTIAL_HDR  = 16w0x0002;
const bit<16> PARSER_ERROR_CTR_RANGE    = 16w0x0004;
const bit<16> PARSER_ERROR_TIMEOUT_USER = 16w0x0008;
const bit<16> PARSER_ERROR_TIMEOUT_HW   = 16w0x0010;
const bit<16> PARSER_ERROR_SRC_EXT      = 16w0x0020;
const bit<16> PARSER_ERROR_PHV_OWNER    = 16w0x0080;
const bit<16> PARSER_ERROR_MULTIWRITE   = 16w0x0100;
const bit<16> PARSER_ERROR_ARAM_MBE     = 16w0x0400;
const bit<16> PARSER_ERROR_FCS          = 16w0x0800;
const bit<16> PARSER_ERROR_CSUM_MBE     = 16w0x1000;

/* Extra parser errors of the target (core.p4 declares the standard ones). */
error {
    CounterRange,
    Timeout,
    PhvOwner,
    MultiWrite,
    IbufOverflow,
    IbufUnderflow
}

/* exact, ternary and lpm come from core.p4. */
match_kind {
    range,
    /* The key fields an ActionSelector hashes to choose a member. */
    selector,
    /* Dynamic d-left hash caching. */
    dleft_hash,
    /* The key that picks an algorithmic-TCAM partition. */
    atcam_partition_index
}

enum MeterType_t { PACKETS, BYTES }

/* A meter's verdict; RED is 3 (not 2) on the hardware. */
enum bit<8> MeterColor_t { GREEN = 8w0, YELLOW = 8w1, RED = 8w3 }

enum CounterType_t { PACKETS, BYTES, PACKETS_AND_BYTES }

enum SelectorMode_t { FAIR, RESILIENT }

/* CUSTOM takes its polynomial from a CRCPolynomial instance. */
enum HashAlgorithm_t { IDENTITY, RANDOM, XOR8, XOR16, XOR32, CRC8, CRC16, CRC32, CRC64, CUSTOM }

enum MathOp_t { MUL, SQR, SQRT, DIV, RSQR, RSQRT };

/* ===================================================================== */
/* Ingress intrinsic metadata                                            */

/* The header the hardware puts in front of every frame entering the
 * ingress parser (8 bytes), followed by PORT_METADATA_SIZE bits of port
 * metadata (or, on a resubmitted packet, the resubmit header). */
@__intrinsic_metadata
header ingress_intrinsic_metadata_t {
    bit<1> resubmit_flag;                 /* 1: this pass is a resubmission */
    @padding bit<1> _pad1;
    bit<2> packet_version;
    @padding bit<(4 - PORT_ID_WIDTH % 8)> _pad2;
    PortId_t ingress_port;
    bit<48> ingress_mac_tstamp;           /* ns, taken by the ingress MAC */
}

/* Ingress to traffic manager: where the packet goes and how it is queued. */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t ucast_egress_port;
    bit<1> bypass_egress;                 /* skip the egress pipeline */
    bit<1> deflect_on_drop;               /* send to the deflection port if dropped */
    bit<3> ingress_cos;                   /* iCoS: priority group, PFC class */
    QueueId_t qid;                        /* queue of the egress port */
    bit<3> icos_for_copy_to_cpu;
    bit<1> copy_to_cpu;
    bit<2> packet_color;                  /* for colour-aware queue admission */
    bit<1> disable_ucast_cutthru;
    bit<1> enable_mcast_cutthru;
    MulticastGroupId_t mcast_grp_a;
    MulticastGroupId_t mcast_grp_b;
    bit<13> level1_mcast_hash;
    bit<13> level2_mcast_hash;
    L1ExclusionId_t level1_exclusion_id;
    L2ExclusionId_t level2_exclusion_id;
    bit<16> rid;                          /* replication id */
}

/* Ingress parser to ingress control. */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;                /* ns */
    bit<32> global_ver;
    bit<16> parser_err;                   /* PARSER_ERROR_* flags */
}

/* Ingress control to ingress deparser. */
@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;                      /* bit 0: drop (unicast, multicast, resubmit) */
    DigestType_t digest_type;             /* which Digest to send, 0: none */
    ResubmitType_t resubmit_type;         /* which Resubmit, 0: none */
    MirrorType_t mirror_type;             /* which Mirror layout, 0: no mirror */
    bit<1> mirror_io_select;              /* 0: mirror the packet as it came in, 1: as it leaves */
    /* Set to override the mirror session's own settings: */
    bit<13> mirror_hash;
    bit<3> mirror_ingress_cos;
    bit<1> mirror_deflect_on_drop;
    bit<1> mirror_multicast_ctrl;
    PortId_t mirror_egress_port;
    QueueId_t mirror_qid;
    bit<8> mirror_coalesce_length;        /* 4-byte words */
    bit<32> adv_flow_ctl;                 /* advanced flow control message to the TM */
    bit<14> mtu_trunc_len;
    bit<1> mtu_trunc_err_f;
    bit<1> pktgen;                        /* trigger the packet generator (not with resubmit) */
    bit<14> pktgen_address;
    bit<10> pktgen_length;
}

/* The ghost thread: queue-length updates the TM sends into ingress,
 * independent of packets. */
@__intrinsic_metadata @__ghost_metadata
header ghost_intrinsic_metadata_t {
    bit<1> ping_pong;
    bit<18> qlength;
    bit<11> qid;
    bit<2> pipe_id;
}

/* ===================================================================== */
/* Egress intrinsic metadata                                             */

/* What the traffic manager prepends to a packet it hands to the egress
 * parser. Queue depths are in TM cells, times in ns. */
@__intrinsic_metadata
header egress_intrinsic_metadata_t {
    @padding bit<(8 - PORT_ID_WIDTH % 8)> _pad0;
    PortId_t egress_port;
    @padding bit<5> _pad1;
    bit<19> enq_qdepth;                   /* cells, when the packet was queued */
    @padding bit<6> _pad2;
    bit<2> enq_congest_stat;
    bit<32> enq_tstamp;                   /* ns */
    @padding bit<5> _pad3;
    bit<19> deq_qdepth;                   /* cells, when the packet left the queue */
    @padding bit<6> _pad4;
    bit<2> deq_congest_stat;
    bit<8> app_pool_congest_stat;         /* 2 bits per application pool */
    bit<32> deq_timedelta;                /* ns spent in the queue */
    bit<16> egress_rid;
    @padding bit<7> _pad5;
    bit<1> egress_rid_first;
    @padding bit<(8 - QUEUE_ID_WIDTH % 8)> _pad6;
    QueueId_t egress_qid;
    @padding bit<5> _pad7;
    bit<3> egress_cos;
    @padding bit<7> _pad8;
    bit<1> deflection_flag;
    bit<16> pkt_length;                   /* bytes */
    @padding bit<8> _pad9;                /* the header is a whole number of 4-byte words */
}

@__intrinsic_metadata
struct egress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

@__intrinsic_metadata
struct egress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;                      /* bit 0: drop, bit 2: no mirror */
    MirrorType_t mirror_type;
    bit<1> coalesce_flush;
    bit<7> coalesce_length;
    bit<1> mirror_io_select;
    bit<13> mirror_hash;
    bit<3> mirror_ingress_cos;
    bit<1> mirror_deflect_on_drop;
    bit<1> mirror_multicast_ctrl;
    PortId_t mirror_egress_port;
    QueueId_t mirror_qid;
    bit<8> mirror_coalesce_length;
    bit<32> adv_flow_ctl;
    bit<14> mtu_trunc_len;
    bit<1> mtu_trunc_err_f;
}

/* IEEE 1588 requests to the egress MAC. */
@__intrinsic_metadata
struct egress_intrinsic_metadata_for_output_port_t {
    bit<1> capture_tstamp_on_tx;
    bit<1> update_delay_on_tx;
}

/* ===================================================================== */
/* Headers of generated packets (Tofino 2 packet generator: timers, port
 * down, recirculation, deparser (Pktgen extern) and PFC triggers). */

header pktgen_timer_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_port_down_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<(16 - PORT_ID_WIDTH % 8)> _pad2;
    PortId_t port_num;
    bit<16> packet_id;
}

header pktgen_recirc_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_deparser_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<8> _pad2;
    bit<16> batch_id;
    bit<16> packet_id;
}

header pktgen_pfc_header_t {
    @padding bit<2> _pad1;
    bit<2> pipe_id;
    bit<4> app_id;
    @padding bit<40> _pad2;
}

/* Prepended by egress when update_delay_on_tx is set. */
header ptp_metadata_t {
    bit<8> udp_cksum_byte_offset;
    bit<8> cf_byte_offset;
    bit<48> updated_cf;
}

/* ===================================================================== */
/* Parser externs                                                        */

/* Ones'-complement 16-bit checksum: verified in parsers (and a residual
 * taken over what follows), computed in deparsers. */
extern Checksum {
    Checksum();
    void add<T>(in T data);
    void subtract<T>(in T data);
    bool verify();
    /* Deposit the sum so far; fields extracted afterwards are subtracted. */
    void subtract_all_and_deposit<T>(out T residual);
    bit<16> get();
    bit<16> update<T>(in T data, @optional in bool zeros_as_ones);
}

/* The parser's 8-bit signed counter (options, stacks of variable length),
 * with a stack four deep on Tofino 2 for nested length fields. */
extern ParserCounter {
    ParserCounter();
    void set<T>(in T value);
    void set<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<8> mask, in bit<8> add);
    void push<T>(in T value, @optional bool update_with_top);
    void push<T>(in T field, in bit<8> max, in bit<8> rotate, in bit<8> mask, in bit<8> add,
                 @optional bool update_with_top);
    void pop();
    bool is_zero();
    bool is_negative();
    void increment(in bit<8> value);
    void decrement(in bit<8> value);
}

/* Priority the ingress parser gives the packet when its buffer is congested. */
extern ParserPriority {
    ParserPriority();
    void set(in bit<3> prio);
}

/* ===================================================================== */
/* Hashing and randomness                                                */

extern CRCPolynomial<T> {
    CRCPolynomial(T coeff, bool reversed, bool msb, bool extended, T init, T xor);
}

extern Hash<W> {
    Hash(HashAlgorithm_t algo);
    Hash(HashAlgorithm_t algo, CRCPolynomial<_> poly);
    W get<D>(in D data);
}

extern Random<W> {
    Random();
    W get();
}

/* Table entry ageing (a table's idle_timeout implementation). */
extern IdleTimeout {
    IdleTimeout();
}

/* ===================================================================== */
/* Extern functions                                                      */

extern T max<T>(in T t1, in T t2);
extern T min<T>(in T t1, in T t2);
extern void funnel_shift_right<T>(out T dst, in T src1, in T src2, int shift_amount);
extern void invalidate<T>(in T field);
extern bool is_validated<T>(in T field);
/* Read the port metadata that follows ingress_intrinsic_metadata_t. */
extern T port_metadata_unpack<T>(packet_in pkt);
extern bit<32> sizeInBits<H>(in H h);
extern bit<32> sizeInBytes<H>(in H h);

/* ===================================================================== */
/* Counters, meters, filters                                             */

@noWarn("unused")
extern Counter<W, I> {
    /* true_egress_accounting: count the bytes the egress deparser sends. */
    Counter(bit<32> size, CounterType_t type, @optional bool true_egress_accounting);
    void count(in I index, @optional in bit<32> adjust_byte_count);
}

@noWarn("unused")
extern DirectCounter<W> {
    DirectCounter(CounterType_t type, @optional bool true_egress_accounting);
    void count(@optional in bit<32> adjust_byte_count);
}

extern Meter<I> {
    Meter(bit<32> size, MeterType_t type, @optional bool true_egress_accounting);
    Meter(bit<32> size, MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green,
          @optional bool true_egress_accounting);
    bit<8> execute(in I index, in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(in I index, @optional in bit<32> adjust_byte_count);
}

extern DirectMeter {
    DirectMeter(MeterType_t type, @optional bool true_egress_accounting);
    DirectMeter(MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green,
                @optional bool true_egress_accounting);
    bit<8> execute(in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(@optional in bit<32> adjust_byte_count);
}

/* Low-pass filter (rate or sample mode, set by the control plane). */
extern Lpf<T, I> {
    Lpf(bit<32> size);
    T execute(in T val, in I index);
}

extern DirectLpf<T> {
    DirectLpf();
    T execute(in T val);
}

/* Weighted random early detection: returns drop_value or no_drop_value. */
extern Wred<T, I> {
    Wred(bit<32> size, bit<8> drop_value, bit<8> no_drop_value);
    bit<8> execute(in T val, in I index);
}

extern DirectWred<T> {
    DirectWred(bit<8> drop_value, bit<8> no_drop_value);
    bit<8> execute(in T val);
}

/* ===================================================================== */
/* Registers and stateful ALU actions                                    */

extern Register<T, I> {
    Register(bit<32> size);
    Register(bit<32> size, T initial_value);
    T read(in I index);
    T write(in I index, in T value);
    /* Set every cell (busy: the value a RegisterAction sees while clearing runs). */
    void clear(in T value, @optional in T busy);
}

extern DirectRegister<T> {
    DirectRegister();
    DirectRegister(T initial_value);
    T read();
    T write(in T value);
    void clear(in T value, @optional in T busy);
}

/* A value the control plane sets and only RegisterActions read. */
extern RegisterParam<T> {
    RegisterParam(T initial_value);
    T read();
}

extern MathUnit<T> {
    /* data: sixteen 8-bit table values, listed from entry 15 down to 0. */
    MathUnit(bool invert, int<2> shift, int<6> scale,
             tuple<bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>,
                   bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>, bit<8>> data);
    MathUnit(MathOp_t op, int factor);
    MathUnit(MathOp_t op, int A, int B);
    T execute(in T x);
}

/* One read-modify-write of a register cell, done atomically by the stateful
 * ALU: execute(i) reads cell i into `value`, runs apply, writes `value`
 * back and returns what apply put in rv1 (rv2..rv4 come back through
 * execute's out parameters). Tofino 2's ALU also runs a register as a FIFO
 * (enqueue/dequeue) or stack (push/pop), and sweeps every cell. */
@noWarn("unused")
extern RegisterAction<T, H, U> {
    RegisterAction(Register<_, _> reg);
    U execute(@optional in H index, @optional out U rv2, @optional out U rv3, @optional out U rv4);
    U execute_log(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U enqueue(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U dequeue(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U push(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    U pop(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    void sweep(@optional in U busy);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop, sweep)
    abstract void apply(inout T value, @optional out U rv1, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    /* Run instead of apply when a push finds the FIFO/stack full ... */
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, @optional out U rv1,
                                     @optional out U rv2, @optional out U rv3, @optional out U rv4);
    /* ... or a pop finds it empty. */
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, @optional out U rv1,
                                      @optional out U rv2, @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

/* RegisterAction with 2 results of their own types. */
extern RegisterAction2<T, H, U1, U2> {
    RegisterAction2(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2);
    U1 execute_log(out U2 rv2);
    U1 enqueue(out U2 rv2);
    U1 dequeue(out U2 rv2);
    U1 push(out U2 rv2);
    U1 pop(out U2 rv2);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, out U1 rv1, out U2 rv2);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

/* RegisterAction with 3 results of their own types. */
extern RegisterAction3<T, H, U1, U2, U3> {
    RegisterAction3(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3);
    U1 execute_log(out U2 rv2, out U3 rv3);
    U1 enqueue(out U2 rv2, out U3 rv3);
    U1 dequeue(out U2 rv2, out U3 rv3);
    U1 push(out U2 rv2, out U3 rv3);
    U1 pop(out U2 rv2, out U3 rv3);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

/* RegisterAction with 4 results of their own types. */
extern RegisterAction4<T, H, U1, U2, U3, U4> {
    RegisterAction4(Register<_, _> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    U1 execute_log(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 enqueue(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 dequeue(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 push(out U2 rv2, out U3 rv3, out U4 rv4);
    U1 pop(out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute, execute_log, enqueue, dequeue, push, pop)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(enqueue, push)
    @optional abstract void overflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(dequeue, pop)
    @optional abstract void underflow(@optional inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction<T, U> {
    DirectRegisterAction(DirectRegister<T> reg);
    U execute(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction2<T, U1, U2> {
    DirectRegisterAction2(DirectRegister<T> reg);
    U1 execute(out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction3<T, U1, U2, U3> {
    DirectRegisterAction3(DirectRegister<T> reg);
    U1 execute(out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern DirectRegisterAction4<T, U1, U2, U3, U4> {
    DirectRegisterAction4(DirectRegister<T> reg);
    U1 execute(out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout T value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

/* A RegisterAction that also sees a learn digest and whether to learn it. */
extern LearnAction<T, H, D, U> {
    LearnAction(Register<T, H> reg);
    U execute(in H index, @optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, @optional out U rv1,
                        @optional out U rv2, @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern LearnAction2<T, H, D, U1, U2> {
    LearnAction2(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern LearnAction3<T, H, D, U1, U2, U3> {
    LearnAction3(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

extern LearnAction4<T, H, D, U1, U2, U3, U4> {
    LearnAction4(Register<T, H> reg);
    U1 execute(in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout T value, in D digest, in bool learn, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<8> max8<I>(in I val, in bit<16> mask, @optional out bit<4> index);
    bit<16> min16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
    bit<16> max16<I>(in I val, in bit<8> mask, @optional out bit<3> index);
}

/* Minimum or maximum over the 8- or 16-bit lanes of a 128-bit register word. */
extern MinMaxAction<T, H, U> {
    MinMaxAction(Register<T, _> reg);
    U execute(@optional in H index, @optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, @optional out U rv1, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
    U address(@optional bit<1> subword);
    U predicate(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<8> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<8> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<8> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<8> postmod);
}

extern MinMaxAction2<T, H, U1, U2> {
    MinMaxAction2(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
}

extern MinMaxAction3<T, H, U1, U2, U3> {
    MinMaxAction3(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2, out U3 rv3);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2, out U3 rv3);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
}

extern MinMaxAction4<T, H, U1, U2, U3, U4> {
    MinMaxAction4(Register<T, _> reg);
    U1 execute(@optional in H index, out U2 rv2, out U3 rv3, out U4 rv4);
    @synchronous(execute)
    abstract void apply(inout bit<128> value, out U1 rv1, out U2 rv2, out U3 rv3, out U4 rv4);
    U address<U>(@optional bit<1> subword);
    U predicate<U>(@optional in bool cmp0, @optional in bool cmp1, @optional in bool cmp2,
                   @optional in bool cmp3);
    bit<8> min8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<8> max8(in bit<128> val, in bit<16> mask, @optional out bit<4> index,
                @optional in int<9> postmod);
    bit<16> min16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
    bit<16> max16(in bit<128> val, in bit<8> mask, @optional out bit<3> index,
                  @optional in int<9> postmod);
}

/* ===================================================================== */
/* Table implementations                                                 */

extern ActionProfile {
    ActionProfile(bit<32> size);
}

extern ActionSelector {
    ActionSelector(ActionProfile action_profile, Hash<_> hash, SelectorMode_t mode,
                   bit<32> max_group_size, bit<32> num_groups);
    ActionSelector(ActionProfile action_profile, Hash<_> hash, SelectorMode_t mode,
                   Register<bit<1>, _> reg, bit<32> max_group_size, bit<32> num_groups);
    @deprecated("build the ActionSelector on an ActionProfile")
    ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode);
    @deprecated("build the ActionSelector on an ActionProfile")
    ActionSelector(bit<32> size, Hash<_> hash, SelectorMode_t mode, Register<bit<1>, _> reg);
}

/* Changes a member's liveness bit in a stateful selector. */
extern SelectorAction {
    SelectorAction(ActionSelector sel);
    bit<1> execute(@optional in bit<32> index);
    @synchronous(execute)
    abstract void apply(inout bit<1> value, @optional out bit<1> rv);
}

/* Algorithmic TCAM: a table implementation; one key is atcam_partition_index. */
extern Atcam {
    Atcam(@optional bit<32> number_partitions);
}

/* Algorithmic LPM: a table implementation for large LPM tables. */
extern Alpm {
    Alpm(@optional bit<32> number_partitions, @optional bit<32> subtrees_per_partition,
         @optional bit<32> atcam_subset_width, @optional bit<32> shift_granularity);
}

/* ===================================================================== */
/* Deparser externs: chosen by the *_for_deparser_t type fields          */

/* Mirror a copy to session `session_id`, with `hdr` in front of it. */
extern Mirror {
    @deprecated("pass Mirror the mirror_type value it serves")
    Mirror();
    Mirror(MirrorType_t mirror_type);
    void emit(in MirrorId_t session_id);
    void emit<T>(in MirrorId_t session_id, in T hdr);
}

/* Send the packet through ingress again, with `hdr` (up to 64 bits) as its
 * port-metadata slot. */
extern Resubmit {
    @deprecated("pass Resubmit the resubmit_type value it serves")
    Resubmit();
    Resubmit(ResubmitType_t resubmit_type);
    void emit();
    void emit<T>(in T hdr);
}

/* Learn-filter message to the control plane. */
extern Digest<T> {
    @deprecated("pass Digest the digest_type value it serves")
    Digest();
    Digest(DigestType_t digest_type);
    void pack(in T data);
}

/* Tofino 2: generate a packet at the end of ingress (ig_intr_md_for_dprsr.pktgen),
 * with `hdr` (up to 128 bits) in front of the generator's payload. */
extern Pktgen {
    Pktgen();
    void emit<T>(in T hdr);
}

#endif
