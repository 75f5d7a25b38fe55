//! The executable form of a BMv2 JSON program: every name resolved to an
//! index at load time, so the packet path only follows indices.

use std::collections::HashMap;

/// Index of a field slot in the packet header vector.
pub type FieldId = u32;
/// Index of a header instance.
pub type HeaderId = u32;

/// One field of one header instance.
#[derive(Debug, Clone)]
pub struct FieldInfo {
    /// Full name `header.field`.
    pub name: String,
    /// Width in bits (for a varbit field: its maximum width).
    pub width: u32,
    /// Whether the field is `int<W>` (read sign-extended).
    pub signed: bool,
    /// Bit offset of the field inside its header's wire form.
    pub bit_offset: u32,
    /// Header instance the field belongs to.
    pub header: HeaderId,
    /// For a field wider than 128 bits: byte offset of its value in
    /// [`crate::packet::Phv::wide`] (its `u128` slot stays 0).
    pub wide: Option<u32>,
}

/// Where a field's wire bits live while the packet is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireKind {
    /// In its `u128` slot.
    Plain,
    /// Wider than 128 bits: bytes at this offset of [`crate::packet::Phv::wide`].
    Wide(u32),
    /// A varbit field: bytes in this varbit buffer (the slot holds the length).
    Varbit(u32),
}

/// A field's wire form, one per field slot: kept apart from [`FieldInfo`]
/// (names and all) so parsing, deparsing and checksums read one small array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireField {
    /// Bit offset inside its header's wire form.
    pub offset: u32,
    /// Width in bits (a varbit field: its maximum).
    pub width: u32,
    /// Where its value lives.
    pub kind: WireKind,
    /// For a plain field wider than 64 bits: where its upper 64 bits are in
    /// [`crate::packet::Phv::high`].
    pub high: Option<u32>,
}

/// One header (or metadata) instance.
#[derive(Debug, Clone)]
pub struct HeaderInfo {
    /// Instance name (`ethernet`, `hdr.s[0]`, `scalars`).
    pub name: String,
    /// First field slot; the header's fields are consecutive slots.
    pub first_field: FieldId,
    /// Number of fields (including a varbit field, if any).
    pub num_fields: u32,
    /// Metadata instances are always valid and never emitted.
    pub metadata: bool,
    /// Width in bits of the fixed part.
    pub fixed_bits: u32,
    /// Index of the varbit field in the header and its varbit buffer slot.
    pub varbit: Option<(u32, u32)>,
    /// Maximum varbit length in bytes.
    pub varbit_max_bytes: u32,
    /// Union this header is a member of (siblings are invalidated on setValid).
    pub union: Option<u32>,
    /// Bytes of its wide fields in [`crate::packet::Phv::wide`]: start and
    /// length (consecutive, so a header copy moves one range).
    pub wide_range: (u32, u32),
    /// Whole bytes of plain fields, each within one 16-byte window from its
    /// first byte: the deparser assembles it in place instead of bit by bit.
    pub packed: bool,
    /// Its packed wire form assembled by machine code (None: interpreted).
    pub native_emit: Option<crate::jit::Packer>,
    /// Its fields extracted by machine code (None: interpreted).
    pub native_extract: Option<crate::jit::Unpacker>,
}

/// A header stack.
#[derive(Debug, Clone)]
pub struct StackInfo {
    /// Stack name.
    pub name: String,
    /// Element header instances, in index order.
    pub headers: Vec<HeaderId>,
}

/// A header union instance.
#[derive(Debug, Clone)]
pub struct UnionInfo {
    /// Union name.
    pub name: String,
    /// Member header instances.
    pub headers: Vec<HeaderId>,
}

/// A stack of header unions.
#[derive(Debug, Clone)]
pub struct UnionStackInfo {
    /// Name.
    pub name: String,
    /// Element unions, in index order.
    pub unions: Vec<u32>,
}

/// Binary operators after compilation (signed variants chosen at load time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Sar,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    SLt,
    SLe,
    SGt,
    SGe,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
}

/// A compiled expression; evaluation never allocates.
#[derive(Debug, Clone)]
pub enum Expr {
    /// Constant.
    Const(u128),
    /// Unsigned field read.
    Field(FieldId),
    /// Signed field read (sign-extended from the width).
    SignedField(FieldId, u32),
    /// Header validity bit.
    Valid(HeaderId),
    /// Any member of a union valid.
    ValidUnion(u32),
    /// Action parameter.
    Local(u16),
    /// Field of the last valid element of a stack.
    StackLast {
        stack: u32,
        offset: u32,
        width: u32,
        signed: bool,
    },
    /// Field of a stack element chosen at run time.
    StackIndex {
        stack: u32,
        index: Box<Expr>,
        offset: u32,
        width: u32,
        signed: bool,
    },
    /// Validity of a stack element chosen at run time.
    StackIndexValid { stack: u32, index: Box<Expr> },
    /// Field of a member of the last extracted union of a union stack.
    UnionStackLast {
        ustack: u32,
        member: u32,
        offset: u32,
        width: u32,
        signed: bool,
    },
    /// Index of the last valid element.
    LastStackIndex(u32),
    /// Number of elements.
    SizeStack(u32),
    /// Bits looked ahead in the packet (parser only).
    Lookahead { offset: u32, width: u32 },
    /// Register cell read.
    Register { array: u32, index: Box<Expr> },
    /// Binary operation.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// Logical not.
    Not(Box<Expr>),
    /// Bitwise complement.
    BitNot(Box<Expr>),
    /// `cond ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Truncate to `w` bits and sign-extend.
    TwoCompMod(Box<Expr>, u32),
    /// Saturate a signed value into `int<w>`.
    SatCast(Box<Expr>, u32),
    /// Saturate an unsigned value into `bit<w>`.
    USatCast(Box<Expr>, u32),
    /// Data to boolean (non-zero).
    D2B(Box<Expr>),
    /// Two varbit fields hold the same bytes (a varbit's slot holds only its
    /// length, so `==` on the slots would miss different contents).
    VarbitEq(FieldId, FieldId),
    /// `==` where an operand is wider than 128 bits (compared as integers).
    WideEq(Box<(WideOperand, WideOperand)>),
    /// Bytes `at..at + len` (`len` at most 16) of [`crate::packet::Phv::wide`]
    /// as an integer: one lookup component of a table key wider than 128 bits.
    WidePart { at: u32, len: u32 },
}

impl Expr {
    /// Whether the value is 0 or 1 already (so `d2b` of it is itself).
    pub fn is_boolean(&self) -> bool {
        match self {
            Expr::Valid(_) | Expr::ValidUnion(_) | Expr::Not(_) | Expr::D2B(_) => true,
            Expr::Bin(op, ..) => matches!(
                op,
                BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
                    | BinOp::SLt
                    | BinOp::SLe
                    | BinOp::SGt
                    | BinOp::SGe
                    | BinOp::And
                    | BinOp::Or
            ),
            _ => false,
        }
    }
}

/// An operand of an operation on a value wider than 128 bits.
#[derive(Debug, Clone)]
pub enum WideOperand {
    /// A wide field: its bytes in [`crate::packet::Phv::wide`].
    Field { at: u32, len: u32 },
    /// A constant, big-endian bytes.
    Const(Box<[u8]>),
    /// A value of at most 128 bits.
    Narrow(Expr),
}

/// An assignment into a field wider than 128 bits.
#[derive(Debug, Clone)]
pub struct WideAssign {
    /// Destination bytes in [`crate::packet::Phv::wide`].
    pub at: u32,
    /// Destination length in bytes.
    pub len: u32,
    /// Destination width in bits (the top byte keeps only `width % 8` bits).
    pub width: u32,
    /// Source; a wide field source has the destination's width, a constant
    /// is exactly `len` bytes (both checked at load time).
    pub src: WideOperand,
}

/// A writable field location.
#[derive(Debug, Clone)]
pub enum LValue {
    /// Fixed field slot.
    Field(FieldId),
    /// Field of the last valid element of a stack.
    StackLast { stack: u32, offset: u32 },
    /// Field of a stack element chosen at run time.
    StackIndex {
        stack: u32,
        index: Expr,
        offset: u32,
    },
}

/// A header location (fixed or a stack element chosen at run time).
#[derive(Debug, Clone)]
pub enum HeaderRef {
    /// Fixed header instance.
    Fixed(HeaderId),
    /// Stack element chosen at run time.
    StackIndex { stack: u32, index: Expr },
}

/// An argument of `log_msg`.
#[derive(Debug, Clone)]
pub enum LogArg {
    /// A value, printed as signed when the flag is set.
    Value(Expr, bool),
    /// A whole header, printed as its fields.
    Header(HeaderId),
    /// A struct or list of values.
    List(Vec<LogArg>),
}

/// One primitive of an action body.
#[derive(Debug, Clone)]
pub enum Prim {
    Assign(LValue, Expr),
    AssignWide(WideAssign),
    AssignHeader(HeaderRef, HeaderRef),
    AssignUnion(u32, u32),
    AssignStack(u32, u32),
    AssignUnionStack(u32, u32),
    AssignVl(FieldId, FieldId),
    AddHeader(HeaderRef),
    RemoveHeader(HeaderRef),
    Push(u32, Expr),
    Pop(u32, Expr),
    MarkToDrop,
    Clone {
        ingress: bool,
        session: Expr,
        field_list: u32,
    },
    Resubmit(u32),
    Recirculate(u32),
    Digest(u32),
    HashOffset {
        dest: LValue,
        base: Expr,
        calc: u32,
        max: Expr,
    },
    Random {
        dest: LValue,
        lo: Expr,
        hi: Expr,
    },
    Truncate(Expr),
    RegisterRead {
        dest: LValue,
        array: u32,
        index: Expr,
    },
    RegisterWrite {
        array: u32,
        index: Expr,
        value: Expr,
    },
    Count {
        array: u32,
        index: Expr,
    },
    ExecuteMeter {
        array: u32,
        index: Expr,
        dest: LValue,
    },
    LogMsg {
        parts: Vec<String>,
        args: Vec<LogArg>,
    },
    Assert(Expr),
    Assume(Expr),
    Exit,
    Jump(u32),
    JumpIfZero(Expr, u32),
    NoOp,
    /// A call of a Tofino (TNA/T2NA) extern.
    Extern(Box<crate::externs::ExternPrim>),
}

/// A table action.
#[derive(Debug, Clone)]
pub struct ActionDef {
    /// Control-plane name.
    pub name: String,
    /// JSON id.
    pub id: u32,
    /// Parameter names and widths, in order.
    pub params: Vec<(String, u32)>,
    /// Body.
    pub prims: Vec<Prim>,
}

/// Where a parser extracts into.
#[derive(Debug, Clone)]
pub enum ExtractTarget {
    /// A header instance.
    Header(HeaderId),
    /// The next element of a stack.
    Stack(u32),
    /// Member of the next union of a union stack.
    UnionStack(u32, u32),
}

/// One parser operation.
#[derive(Debug, Clone)]
pub enum ParserOp {
    Extract(ExtractTarget),
    ExtractVl(ExtractTarget, Expr),
    Set(LValue, Expr),
    Verify(Expr, Expr),
    Advance(Expr),
    Primitive(Prim),
}

/// One component of a transition key.
#[derive(Debug, Clone)]
pub struct KeyComponent {
    /// Value source.
    pub expr: Expr,
    /// Width in bits.
    pub width: u32,
}

/// How a transition matches.
#[derive(Debug, Clone)]
pub enum TransitionMatch {
    /// Always.
    Default,
    /// Per-component value and mask.
    Value(Vec<(u128, u128)>),
    /// Membership in a value set (the key concatenated at unpadded widths),
    /// after an optional mask in the same layout.
    ValueSet(u32, Option<u128>),
}

/// A parser transition.
#[derive(Debug, Clone)]
pub struct Transition {
    /// Match.
    pub on: TransitionMatch,
    /// Next state, `None` = accept.
    pub next: Option<u32>,
}

/// A parse state.
#[derive(Debug, Clone)]
pub struct ParseState {
    /// Name.
    pub name: String,
    /// Operations.
    pub ops: Vec<ParserOp>,
    /// Key.
    pub key: Vec<KeyComponent>,
    /// Transitions in order.
    pub transitions: Vec<Transition>,
    /// Bits past the cursor the key looks ahead at (0 if none), so the
    /// parser raises PacketTooShort before reading beyond the frame.
    pub key_lookahead: usize,
    /// TNA's `$reject` state: reaching it ends parsing and drops the packet.
    pub reject: bool,
}

/// A parser value set.
#[derive(Debug, Clone)]
pub struct ValueSet {
    /// Control-plane name.
    pub name: String,
    /// Width of the concatenated key in bits.
    pub width: u32,
    /// Maximum number of values.
    pub max_size: usize,
}

/// A calculation input element.
#[derive(Debug, Clone)]
pub enum CalcInput {
    /// A field (skipped if its header is invalid).
    Field(FieldId),
    /// A constant of the given width.
    Const(u128, u32),
    /// A whole header (skipped if invalid).
    Header(HeaderId),
    /// The unparsed payload.
    Payload,
}

/// Hash algorithms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashAlgo {
    Crc16,
    Crc32,
    Crc16Custom,
    Crc32Custom,
    Csum16,
    Xor16,
    Identity,
    Random,
    CrcCcitt,
    Xor32,
    /// TNA's `XOR8`: XOR of the input's bytes.
    Xor8,
    RoundRobin,
    /// A CRC with its own parameters (TNA's `CRCPolynomial` and predefined
    /// algorithms): index into [`Program::crcs`].
    Crc(u32),
}

/// A named calculation.
#[derive(Debug, Clone)]
pub struct Calculation {
    /// Name.
    pub name: String,
    /// Algorithm.
    pub algo: HashAlgo,
    /// Input list.
    pub inputs: Vec<CalcInput>,
    /// The inputs laid out at load time, when they allow it.
    pub packed: Option<PackedInputs>,
    /// TNA `@symmetric` pairs of input positions: the smaller value of each pair is
    /// hashed first, so a flow's two directions hash alike.
    pub symmetric: Vec<(u16, u16)>,
}

/// Calculation inputs that are all plain fields of one header (an IPv4
/// checksum's, say), whole bytes together: their places in the
/// concatenation are fixed, so it is assembled in place.
#[derive(Debug, Clone)]
pub struct PackedInputs {
    /// The header; its fields count only while it is valid.
    pub header: HeaderId,
    /// Bytes of the concatenation.
    pub bytes: u32,
    /// Each field with its bit offset in the concatenation.
    pub fields: Vec<(FieldId, u32)>,
    /// The concatenation assembled by machine code (None: interpreted).
    pub native: Option<crate::jit::Packer>,
}

impl Calculation {
    /// A calculation over `inputs`, laid out at load time when they allow it.
    pub fn new(p: &Program, name: String, algo: HashAlgo, inputs: Vec<CalcInput>) -> Self {
        let packed = PackedInputs::of(p, &inputs);
        Calculation {
            name,
            algo,
            inputs,
            packed,
            symmetric: vec![],
        }
    }
}

impl PackedInputs {
    fn of(p: &Program, inputs: &[CalcInput]) -> Option<PackedInputs> {
        let mut header = None;
        let mut fields = Vec::with_capacity(inputs.len());
        let mut at = 0u32;
        for input in inputs {
            let CalcInput::Field(f) = *input else {
                return None;
            };
            let wf = p.wire.get(f as usize)?;
            let h = p.fields.get(f as usize)?.header;
            if wf.kind != WireKind::Plain
                || *header.get_or_insert(h) != h
                || at % 8 + wf.width > 128
            {
                return None;
            }
            fields.push((f, at));
            at += wf.width;
        }
        Some(PackedInputs {
            header: header?,
            bytes: at.is_multiple_of(8).then_some(at / 8)?,
            fields,
            native: None,
        })
    }
}

/// A checksum to verify after parsing or update before deparsing.
#[derive(Debug, Clone)]
pub struct Checksum {
    /// Name.
    pub name: String,
    /// Field holding the checksum.
    pub target: FieldId,
    /// Calculation.
    pub calc: u32,
    /// Verified at the end of parsing.
    pub verify: bool,
    /// Recomputed at the start of deparsing.
    pub update: bool,
    /// Condition.
    pub cond: Option<Expr>,
}

/// Match kinds of a table key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Lpm,
    Ternary,
    Range,
    Optional,
}

/// One lookup component of a table key (a whole match field, or up to 128
/// bits of one wider than that).
#[derive(Debug, Clone)]
pub struct TableKey {
    /// Name as in the JSON (`hdr.ipv4.dstAddr`).
    pub name: String,
    /// Match kind.
    pub kind: MatchKind,
    /// Source of the key value.
    pub expr: Expr,
    /// Width in bits.
    pub width: u32,
    /// Mask applied to the value before matching.
    pub mask: Option<u128>,
}

#[cfg(test)]
impl TableKey {
    /// A component of `kind` and `width` bits, unmasked, whose value the
    /// tests of an index give it (a constant 0 as its source).
    pub(crate) fn of(kind: MatchKind, width: u32) -> TableKey {
        TableKey {
            name: format!("k{width}"),
            kind,
            expr: Expr::Const(0),
            width,
            mask: None,
        }
    }
}

/// One match field of a table as the control plane (P4Info) sees it. A
/// field wider than 128 bits is looked up as several `u128` components, so
/// exact hashing and entry storage stay as for narrow keys.
#[derive(Debug, Clone)]
pub struct MatchField {
    /// Name as in the JSON.
    pub name: String,
    /// Match kind.
    pub kind: MatchKind,
    /// Width in bits.
    pub width: u32,
    /// Its components in [`TableDef::keys`]: index of the first and count
    /// (more than one only when wider than 128 bits, most significant first).
    pub parts: (u32, u32),
}

/// Structure used to look entries up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupKind {
    /// All keys exact: one hash map.
    Exact,
    /// One LPM key: per-prefix-length hash maps.
    Lpm,
    /// Ternary/range/optional: priority-ordered list.
    Ordered,
}

/// Table implementation type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableType {
    Simple,
    Indirect,
    IndirectWs,
}

/// A control-flow node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Node {
    Table(u32),
    Cond(u32),
}

/// A conditional node.
#[derive(Debug, Clone)]
pub struct Conditional {
    /// Name.
    pub name: String,
    /// Condition.
    pub expr: Expr,
    /// Successor when true.
    pub true_next: Option<Node>,
    /// Successor when false.
    pub false_next: Option<Node>,
}

/// Static description of a match table.
#[derive(Debug, Clone)]
pub struct TableDef {
    /// Control-plane name.
    pub name: String,
    /// Lookup components of the key, each at most 128 bits wide.
    pub keys: Vec<TableKey>,
    /// Match fields as the control plane names them, over `keys`.
    pub fields: Vec<MatchField>,
    /// Lookup structure.
    pub lookup: LookupKind,
    /// An exact or LPM key made of whole plain fields, at most 64 bits
    /// together: (slot, width) most significant first, packed straight from
    /// the PHV for the exact or LPM index instead of evaluating the key.
    pub field_key: Option<Box<[(FieldId, u32)]>>,
    /// Implementation type.
    pub ty: TableType,
    /// Action profile (indirect tables).
    pub profile: Option<u32>,
    /// Capacity.
    pub max_size: usize,
    /// Direct counters attached.
    pub with_counters: bool,
    /// Direct meter array and the field receiving its colour.
    pub direct_meter: Option<(u32, Option<FieldId>)>,
    /// Allowed action ids.
    pub actions: Vec<u32>,
    /// Successor per action (indexed by action index), when not hit/miss based.
    pub next_by_action: Vec<Option<Node>>,
    /// Successors for `__HIT__`/`__MISS__` tables.
    pub hit_miss: Option<(Option<Node>, Option<Node>)>,
    /// Successor of the JSON default entry.
    pub base_default_next: Option<Node>,
    /// Initial default action and data.
    pub default_entry: Option<(u32, Vec<u128>, bool)>,
    /// Const entries: (keys, action id, data, priority).
    pub const_entries: Vec<(Vec<crate::tables::MatchValue>, u32, Vec<u128>, i32)>,
}

/// An action profile or selector.
#[derive(Debug, Clone)]
pub struct ProfileDef {
    /// Name.
    pub name: String,
    /// Capacity.
    pub max_size: usize,
    /// Selector: algorithm and inputs.
    pub selector: Option<Calculation>,
    /// The selector hash's bits that choose a member (a TNA `Hash<W>`'s low W bits;
    /// all of them otherwise).
    pub selector_mask: u64,
}

/// A pipeline (`ingress` or `egress`).
#[derive(Debug, Clone)]
pub struct Pipeline {
    /// Name.
    pub name: String,
    /// First node.
    pub init: Option<Node>,
}

/// Counter array definition.
#[derive(Debug, Clone)]
pub struct CounterDef {
    /// Name.
    pub name: String,
    /// Cells (for direct counters: 0, they live in the table entries).
    pub size: usize,
    /// Bound to a table.
    pub direct_table: Option<u32>,
}

/// Meter array definition.
#[derive(Debug, Clone)]
pub struct MeterDef {
    /// Name.
    pub name: String,
    /// Cells.
    pub size: usize,
    /// Counts bytes (else packets).
    pub bytes: bool,
    /// Number of rates (2 for trTCM).
    pub rate_count: usize,
    /// Bound to a table.
    pub direct_table: Option<u32>,
}

/// Register array definition.
#[derive(Debug, Clone)]
pub struct RegisterDef {
    /// Name.
    pub name: String,
    /// Cells.
    pub size: usize,
    /// Cell width in bits.
    pub width: u32,
    /// Every cell's value when the program loads (TNA's `Register(size, initial)`).
    pub initial: u128,
}

/// A field list (preservation lists and learn lists).
#[derive(Debug, Clone)]
pub struct FieldList {
    /// Name.
    pub name: String,
    /// Fields.
    pub fields: Vec<FieldId>,
}

/// Field slots of `standard_metadata` the switch itself reads and writes.
#[derive(Debug, Clone, Copy)]
pub struct StdMeta {
    pub header: HeaderId,
    pub ingress_port: FieldId,
    pub egress_spec: FieldId,
    pub egress_port: FieldId,
    pub instance_type: FieldId,
    pub packet_length: FieldId,
    pub enq_timestamp: Option<FieldId>,
    pub enq_qdepth: Option<FieldId>,
    pub deq_timedelta: Option<FieldId>,
    pub deq_qdepth: Option<FieldId>,
    pub ingress_global_timestamp: Option<FieldId>,
    pub egress_global_timestamp: Option<FieldId>,
    pub mcast_grp: Option<FieldId>,
    pub egress_rid: Option<FieldId>,
    pub checksum_error: Option<FieldId>,
    pub parser_error: Option<FieldId>,
    pub priority: Option<FieldId>,
    pub qid: Option<FieldId>,
}

/// A standard-metadata field as the packet path writes it: its 64-bit slot and
/// width mask. A field the program lacks has a slot past every PHV, which
/// [`crate::packet::Phv::put`] ignores and [`crate::packet::Phv::read`] reads as 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdSlot {
    pub slot: u32,
    pub mask: u64,
}

impl StdSlot {
    /// The slot of a field the program does not have.
    pub const ABSENT: StdSlot = StdSlot {
        slot: u32::MAX,
        mask: 0,
    };

    /// Field `f` of `p` (at most 64 bits wide, as the loader checks), or ABSENT.
    fn of(p: &Program, f: Option<FieldId>) -> StdSlot {
        f.map_or(StdSlot::ABSENT, |f| StdSlot {
            slot: f,
            mask: crate::bits::mask(p.fields[f as usize].width) as u64,
        })
    }
}

impl Default for StdSlot {
    fn default() -> Self {
        StdSlot::ABSENT
    }
}

/// The standard metadata v1model's engine reads and writes per packet, resolved
/// at load to [`StdSlot`]s: the packet path neither branches on a missing
/// field nor looks a width up.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdSlots {
    pub ingress_port: StdSlot,
    pub egress_spec: StdSlot,
    pub egress_port: StdSlot,
    pub instance_type: StdSlot,
    pub packet_length: StdSlot,
    pub ingress_global_timestamp: StdSlot,
    pub egress_global_timestamp: StdSlot,
    pub enq_timestamp: StdSlot,
    pub enq_qdepth: StdSlot,
    pub deq_timedelta: StdSlot,
    pub deq_qdepth: StdSlot,
    pub qid: StdSlot,
    pub mcast_grp: StdSlot,
    pub egress_rid: StdSlot,
    pub priority: StdSlot,
}

impl StdSlots {
    /// The slots of `p`'s standard metadata (`p.std`, already loaded).
    pub fn of(p: &Program) -> StdSlots {
        let s = p.std;
        let at = |f| StdSlot::of(p, f);
        StdSlots {
            ingress_port: at(Some(s.ingress_port)),
            egress_spec: at(Some(s.egress_spec)),
            egress_port: at(Some(s.egress_port)),
            instance_type: at(Some(s.instance_type)),
            packet_length: at(Some(s.packet_length)),
            ingress_global_timestamp: at(s.ingress_global_timestamp),
            egress_global_timestamp: at(s.egress_global_timestamp),
            enq_timestamp: at(s.enq_timestamp),
            enq_qdepth: at(s.enq_qdepth),
            deq_timedelta: at(s.deq_timedelta),
            deq_qdepth: at(s.deq_qdepth),
            qid: at(s.qid),
            mcast_grp: at(s.mcast_grp),
            egress_rid: at(s.egress_rid),
            priority: at(s.priority),
        }
    }
}

/// What a loaded program is to the architecture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProgramKind {
    /// v1model: parser, ingress, egress, deparser in one program.
    #[default]
    V1model,
    /// A TNA/T2NA pipe's ingress: parser, control, deparser.
    TnaIngress,
    /// A TNA/T2NA pipe's egress: parser, control, deparser.
    TnaEgress,
}

/// Field slots of a TNA gress's intrinsic metadata the engine writes before a block
/// and reads after it (None where the program's gress has no such field).
#[derive(Debug, Clone, Copy, Default)]
pub struct TnaMeta {
    /// The prepended intrinsic header (`ig_intr_md` / `eg_intr_md`).
    pub prepended: Option<HeaderId>,
    /// Its fields the engine fills, by [`Prepended`] (index = the variant).
    pub prepended_fields: [Option<FieldId>; Prepended::ALL.len()],
    /// `ig_intr_md_for_tm.ucast_egress_port`.
    pub ucast_egress_port: Option<FieldId>,
    /// `ig_intr_md_for_tm.qid`.
    pub qid: Option<FieldId>,
    /// `ig_intr_md_for_tm.ingress_cos`.
    pub ingress_cos: Option<FieldId>,
    /// `ig_intr_md_for_tm.bypass_egress`.
    pub bypass_egress: Option<FieldId>,
    /// `ig_intr_md_for_tm.mcast_grp_a`.
    pub mcast_grp_a: Option<FieldId>,
    /// `ig_intr_md_for_tm.mcast_grp_b`.
    pub mcast_grp_b: Option<FieldId>,
    /// `ig_intr_md_for_tm.rid`.
    pub rid: Option<FieldId>,
    /// `ig_intr_md_for_tm.deflect_on_drop`.
    pub deflect_on_drop: Option<FieldId>,
    /// `ig_intr_md_for_tm.copy_to_cpu`.
    pub copy_to_cpu: Option<FieldId>,
    /// `ig_intr_md_for_tm.packet_color`.
    pub packet_color: Option<FieldId>,
    /// `*_intr_md_from_prsr.global_tstamp`.
    pub global_tstamp: Option<FieldId>,
    /// `*_intr_md_from_prsr.parser_err`.
    pub parser_err: Option<FieldId>,
    /// `*_intr_md_for_dprsr.drop_ctl`.
    pub drop_ctl: Option<FieldId>,
    /// T2NA's ghost thread: `gh_intr_md.qid`, `.qlength`, `.pipe_id`, `.ping_pong`.
    pub ghost_qid: Option<FieldId>,
    /// `gh_intr_md.qlength` (cells).
    pub ghost_qlength: Option<FieldId>,
    /// `gh_intr_md.pipe_id`.
    pub ghost_pipe_id: Option<FieldId>,
    /// `gh_intr_md.ping_pong`.
    pub ghost_ping_pong: Option<FieldId>,
    /// `ig_intr_md_for_dprsr.digest_type`.
    pub digest_type: Option<FieldId>,
    /// `ig_intr_md_for_dprsr.resubmit_type`.
    pub resubmit_type: Option<FieldId>,
    /// `*_intr_md_for_dprsr.mirror_type`.
    pub mirror_type: Option<FieldId>,
}

/// Fields of the intrinsic metadata the target puts in front of a TNA gress's
/// packet (`ingress_intrinsic_metadata_t`, `egress_intrinsic_metadata_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepended {
    ResubmitFlag,
    PacketVersion,
    IngressPort,
    IngressMacTstamp,
    EgressPort,
    EnqQdepth,
    EnqCongestStat,
    EnqTstamp,
    DeqQdepth,
    DeqCongestStat,
    AppPoolCongestStat,
    DeqTimedelta,
    EgressRid,
    EgressRidFirst,
    EgressQid,
    EgressCos,
    DeflectionFlag,
    PktLength,
}

impl Prepended {
    /// Every field, in variant order.
    pub const ALL: [Prepended; 18] = [
        Prepended::ResubmitFlag,
        Prepended::PacketVersion,
        Prepended::IngressPort,
        Prepended::IngressMacTstamp,
        Prepended::EgressPort,
        Prepended::EnqQdepth,
        Prepended::EnqCongestStat,
        Prepended::EnqTstamp,
        Prepended::DeqQdepth,
        Prepended::DeqCongestStat,
        Prepended::AppPoolCongestStat,
        Prepended::DeqTimedelta,
        Prepended::EgressRid,
        Prepended::EgressRidFirst,
        Prepended::EgressQid,
        Prepended::EgressCos,
        Prepended::DeflectionFlag,
        Prepended::PktLength,
    ];

    /// The field's name in the architecture's header type.
    pub fn name(self) -> &'static str {
        match self {
            Prepended::ResubmitFlag => "resubmit_flag",
            Prepended::PacketVersion => "packet_version",
            Prepended::IngressPort => "ingress_port",
            Prepended::IngressMacTstamp => "ingress_mac_tstamp",
            Prepended::EgressPort => "egress_port",
            Prepended::EnqQdepth => "enq_qdepth",
            Prepended::EnqCongestStat => "enq_congest_stat",
            Prepended::EnqTstamp => "enq_tstamp",
            Prepended::DeqQdepth => "deq_qdepth",
            Prepended::DeqCongestStat => "deq_congest_stat",
            Prepended::AppPoolCongestStat => "app_pool_congest_stat",
            Prepended::DeqTimedelta => "deq_timedelta",
            Prepended::EgressRid => "egress_rid",
            Prepended::EgressRidFirst => "egress_rid_first",
            Prepended::EgressQid => "egress_qid",
            Prepended::EgressCos => "egress_cos",
            Prepended::DeflectionFlag => "deflection_flag",
            Prepended::PktLength => "pkt_length",
        }
    }
}

/// Error codes the parser raises, looked up once.
#[derive(Debug, Clone, Copy)]
pub struct ErrorCodes {
    pub packet_too_short: u32,
    pub stack_out_of_bounds: u32,
    pub header_too_short: u32,
    pub parser_invalid_argument: u32,
}

/// Where a primitive or condition was written in the P4 source (the JSON's
/// `source_info`), for the per-packet trace only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceRef {
    /// `file(line)`, as BMv2 prints it before a primitive or condition.
    pub at: String,
    /// The source text (`hdr.ipv4.ttl = hdr.ipv4.ttl - 1`).
    pub fragment: String,
}

/// Names and source references that only the per-packet trace reads.
#[derive(Debug, Clone, Default)]
pub struct TraceNames {
    /// The parser's name in the JSON (`parser`).
    pub parser: String,
    /// The deparser's name in the JSON (`deparser`).
    pub deparser: String,
    /// Per action, per primitive: where it was written.
    pub primitives: Vec<Vec<Option<SourceRef>>>,
    /// Per conditional: where it was written.
    pub conditionals: Vec<Option<SourceRef>>,
}

/// The whole loaded program.
#[derive(Debug, Clone)]
pub struct Program {
    pub fields: Vec<FieldInfo>,
    /// Wire form per field slot (see [`WireField`]).
    pub wire: Vec<WireField>,
    pub headers: Vec<HeaderInfo>,
    /// Each header's validity when a packet arrives: metadata valid, the rest not.
    pub reset_validity: Vec<bool>,
    pub stacks: Vec<StackInfo>,
    pub unions: Vec<UnionInfo>,
    pub union_stacks: Vec<UnionStackInfo>,
    pub num_varbits: u32,
    /// Bytes of [`crate::packet::Phv::wide`] (all fields wider than 128 bits).
    pub wide_bytes: u32,
    /// Slots of [`crate::packet::Phv::high`] (plain fields wider than 64 bits).
    pub num_high: u32,
    pub parse_states: Vec<ParseState>,
    pub init_state: Option<u32>,
    /// A TNA `MultiParserSwitch`'s other ingress parsers (`parser_1`, ...): their
    /// initial states, in order (parser `i + 1` of the control plane).
    pub other_parsers: Vec<Option<u32>>,
    /// The parser as machine code, when the JIT compiled any of its states.
    pub native_parser: Option<crate::jit::NativeParser>,
    /// The deparser's emission as machine code, when a header it emits is packed.
    pub native_deparser: Option<crate::jit::NativeDeparser>,
    pub value_sets: Vec<ValueSet>,
    pub deparse_order: Vec<HeaderId>,
    /// Primitives the deparser runs after updating checksums (e.g. `log_msg`).
    pub deparser_prims: Vec<Prim>,
    pub actions: Vec<ActionDef>,
    pub tables: Vec<TableDef>,
    pub conditionals: Vec<Conditional>,
    pub profiles: Vec<ProfileDef>,
    pub ingress: Pipeline,
    pub egress: Pipeline,
    /// T2NA's ghost control (in a TNA ingress gress; no init for anything else).
    pub ghost: Pipeline,
    pub calculations: Vec<Calculation>,
    pub checksums: Vec<Checksum>,
    pub counters: Vec<CounterDef>,
    pub meters: Vec<MeterDef>,
    pub registers: Vec<RegisterDef>,
    /// Preservation field lists by JSON id.
    pub field_lists: HashMap<u32, FieldList>,
    /// Learn lists by JSON id.
    pub learn_lists: HashMap<u32, FieldList>,
    pub errors: Vec<(String, u32)>,
    pub error_codes: ErrorCodes,
    pub std: StdMeta,
    /// `std` as the packet path writes it (v1model).
    pub std_slots: StdSlots,
    /// Which blocks this program is: v1model's whole program or one TNA gress.
    pub kind: ProgramKind,
    /// A TNA gress's intrinsic metadata (all None for v1model).
    pub tna: TnaMeta,
    /// Tofino extern instances (checksums, register actions, ...).
    pub externs: crate::externs::ExternDefs,
    /// CRCs of `HashAlgo::Crc` calculations.
    pub crcs: Vec<crate::hash::Crc>,
    /// Field names (with aliases) to slots, for the runtime API only.
    pub field_by_name: HashMap<String, FieldId>,
    pub header_by_name: HashMap<String, HeaderId>,
    /// Straight-line forms of the actions and controls (built last by the loader).
    pub flat: crate::flat::Flat,
    /// What the per-packet trace names and quotes.
    pub trace_names: TraceNames,
}

impl Program {
    /// Looks a field up by `header.field` name or alias (control path only).
    pub fn field(&self, name: &str) -> Option<FieldId> {
        self.field_by_name.get(name).copied()
    }

    /// Finds a table by name.
    pub fn table_id(&self, name: &str) -> Option<u32> {
        self.tables
            .iter()
            .position(|t| t.name == name)
            .map(|i| i as u32)
    }

    /// Finds an action by name (index into `actions`).
    pub fn action_index(&self, name: &str) -> Option<u32> {
        self.actions
            .iter()
            .position(|a| a.name == name)
            .map(|i| i as u32)
    }
}
